#include "analysis.h"

#include <stdlib.h>

#include "ceiling.h"
#include "utf8.h"

void analysis_options_default(analysis_options_t *options)
{
    options->min_share = 0.05;
    options->top = 0;
    options->all_segments = false;
    options->min_share_strict = false;
    options->stop_within = CEILING_STOP_WITHIN_DEFAULT;
}

double analysis_pct(double x)
{
    return x < 0 ? 0 : x > 100 ? 100 : x;
}

json_t *analysis_json_text(const char *text)
{
    char *clean = utf8_clean_dup(text);
    json_t *s = clean ? json_string(clean) : NULL;
    free(clean);
    return s;
}
