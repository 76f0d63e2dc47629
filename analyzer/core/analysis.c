#include "analysis.h"

#include "ceiling.h"

void analysis_options_default(analysis_options_t *options)
{
    options->min_share = 0.05;
    options->top = 0;
    options->all_segments = false;
    options->min_share_strict = false;
    options->stop_within = CEILING_STOP_WITHIN_DEFAULT;
}
