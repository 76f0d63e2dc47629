#include "cmd_analyze.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profeed_client.h"
#include "profiler.h"

static void s_help(FILE *out)
{
    fprintf(out,
        "usage: profeed analyze [options] FILE|FOLDER...\n"
        "\n"
        "Turns profiler output into ranked optimization feedback: for every kernel that\n"
        "matters, what limits it, the numbers that show it, and what to change. Several\n"
        "files are several passes of one job (e.g. ncu runs with different sections);\n"
        "a folder stands for the files in it (unitrace writes one a process); '-' reads\n"
        "standard input. No farm is needed.\n"
        "\n"
        "options:\n"
        "  --profiler ncu|unitrace|vtune|auto\n"
        "                        which profiler wrote the files (default auto: from --language\n"
        "                        and --arch when given, else from the files themselves)\n"
        "  --language L --arch A the job's language (cuda, triton, pytorch, sycl, ocl) and GPU\n"
        "                        architecture; pick the profiler as KernelFoundry does\n"
        "  --format text|json|markdown\n"
        "                        text for an LLM prompt (default), JSON for programs,\n"
        "                        Markdown for people\n"
        "  --top N               analyze at most N kernels (default: all above --min-share)\n"
        "  --min-share PCT       analyze kernels taking at least PCT%% of profiled time\n"
        "                        (default 5)\n"
        "  --max-chars N         text: keep the most important findings within N characters\n"
        "                        (at least 200; not with json or markdown, which are not cut)\n"
        "  --max-tokens N        text: the same within N tokens, as estimated on the safe side\n"
        "                        of the cl100k/o200k tokenizers (at least 64; docs/benchmarks.md)\n"
        "  --device NAME         GPU name when the capture does not carry it (for peaks)\n"
        "  --pci-id ID           PCI device id (0xe20b), for Intel GPU roofs\n"
        "  --cpu-model TEXT      CPU model, which names an integrated Intel GPU\n"
        "  --reference FILE      a file of the task's reference implementation's profile\n"
        "                        (repeatable); summarised beside this one\n"
        "  --baseline FILE       a file of the baseline's capture: an earlier round of the same\n"
        "                        program (repeatable: one flag per file, so the baseline's\n"
        "                        files never mix with this job's). The feedback opens with the\n"
        "                        change: per kernel time before/after with a noise band, limiter,\n"
        "                        findings resolved/new/unchanged, verdict (docs/baselines.md)\n"
        "  --stop-within X       say \"consider stopping\" when every kernel above --min-share is\n"
        "                        within X of its ceiling (default 1.15: at most 1.15x left)\n"
        "  --all-segments        unitrace: every benchmark window, not the median and slowest\n"
        "  --collated            JSON: include the collated per-launch metrics\n"
        "  -h, --help            this text\n"
        "\n"
        "exit status:\n"
        "  0    feedback produced (also when the capture profiled no kernel)\n"
        "  1    another failure (out of memory)\n"
        "  2    bad input: an option, or a file that is unreadable, cut short, malformed or\n"
        "       not the named profiler's output (the message names file, line and problem)\n"
        "  3    the profiler reported an error (the feedback quotes it)\n");
}

static int s_parse_size(const char *text, const char *flag, size_t *out)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (end == text || *end || errno || v < 0) {
        fprintf(stderr, "profeed analyze: %s needs a non-negative whole number, got \"%s\"\n", flag, text);
        return -1;
    }
    *out = (size_t) v;
    return 0;
}

int cmd_analyze(int argc, char **argv)
{
    enum {
        OPT_PROFILER = 256, OPT_FORMAT, OPT_TOP, OPT_MAX_CHARS, OPT_MIN_SHARE, OPT_DEVICE, OPT_COLLATED,
        OPT_LANGUAGE, OPT_ARCH, OPT_PCI, OPT_CPU, OPT_REFERENCE, OPT_ALL_SEGMENTS, OPT_MAX_TOKENS, OPT_BASELINE,
        OPT_STOP_WITHIN
    };
    static const struct option longopts[] = {
        {"profiler", required_argument, NULL, OPT_PROFILER},
        {"format", required_argument, NULL, OPT_FORMAT},
        {"top", required_argument, NULL, OPT_TOP},
        {"max-chars", required_argument, NULL, OPT_MAX_CHARS},
        {"max-tokens", required_argument, NULL, OPT_MAX_TOKENS},
        {"min-share", required_argument, NULL, OPT_MIN_SHARE},
        {"device", required_argument, NULL, OPT_DEVICE},
        {"collated", no_argument, NULL, OPT_COLLATED},
        {"language", required_argument, NULL, OPT_LANGUAGE},
        {"arch", required_argument, NULL, OPT_ARCH},
        {"pci-id", required_argument, NULL, OPT_PCI},
        {"cpu-model", required_argument, NULL, OPT_CPU},
        {"reference", required_argument, NULL, OPT_REFERENCE},
        {"all-segments", no_argument, NULL, OPT_ALL_SEGMENTS},
        {"baseline", required_argument, NULL, OPT_BASELINE},
        {"stop-within", required_argument, NULL, OPT_STOP_WITHIN},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    profeed_analyze_options_t options;
    profeed_analyze_options_init(&options);
    const char *references[64];
    size_t reference_count = 0;
    const char *baselines[64];
    size_t baseline_count = 0;
    optind = 1;
    int opt;
    while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (opt) {
        case OPT_PROFILER:
            if (!profiler_by_name(optarg) && strcmp(optarg, "auto")) {
                fprintf(stderr, "profeed analyze: --profiler must be %s or auto, got \"%s\"\n", profiler_names(),
                        optarg);
                return 2;
            }
            options.profiler = optarg;
            break;
        case OPT_FORMAT:
            if (strcmp(optarg, "text") == 0)
                options.format = PROFEED_FORMAT_TEXT;
            else if (strcmp(optarg, "json") == 0)
                options.format = PROFEED_FORMAT_JSON;
            else if (strcmp(optarg, "markdown") == 0 || strcmp(optarg, "md") == 0)
                options.format = PROFEED_FORMAT_MARKDOWN;
            else {
                fprintf(stderr, "profeed analyze: --format must be text, json or markdown, got \"%s\"\n",
                        optarg);
                return 2;
            }
            break;
        case OPT_TOP:
            if (s_parse_size(optarg, "--top", &options.top))
                return 2;
            break;
        case OPT_MAX_CHARS:
            if (s_parse_size(optarg, "--max-chars", &options.max_chars))
                return 2;
            break;
        case OPT_MAX_TOKENS:
            if (s_parse_size(optarg, "--max-tokens", &options.max_tokens))
                return 2;
            break;
        case OPT_MIN_SHARE: {
            char *end = NULL;
            double pct = strtod(optarg, &end);
            if (end == optarg || *end || pct < 0 || pct > 100) {
                fprintf(stderr, "profeed analyze: --min-share needs a percentage 0..100, got \"%s\"\n",
                        optarg);
                return 2;
            }
            options.min_share = pct / 100;
            options.min_share_given = 1;
            break;
        }
        case OPT_DEVICE: options.device = optarg; break;
        case OPT_COLLATED: options.with_collated = 1; break;
        case OPT_LANGUAGE: options.language = optarg; break;
        case OPT_ARCH: options.gpu_arch = optarg; break;
        case OPT_PCI: options.pci_id = optarg; break;
        case OPT_CPU: options.cpu_model = optarg; break;
        case OPT_ALL_SEGMENTS: options.all_segments = 1; break;
        case OPT_REFERENCE:
            if (reference_count == sizeof references / sizeof references[0]) {
                fprintf(stderr, "profeed analyze: at most %zu --reference files\n", reference_count);
                return 2;
            }
            references[reference_count++] = optarg;
            break;
        case OPT_BASELINE:
            if (baseline_count == sizeof baselines / sizeof baselines[0]) {
                fprintf(stderr, "profeed analyze: at most %zu --baseline files\n", baseline_count);
                return 2;
            }
            baselines[baseline_count++] = optarg;
            break;
        case OPT_STOP_WITHIN: {
            char *end = NULL;
            errno = 0;
            double x = strtod(optarg, &end);
            if (end == optarg || *end || errno || !(x >= 1 && x <= 100)) {
                fprintf(stderr, "profeed analyze: --stop-within needs a factor 1..100 (1.15: within 1.15x of the "
                                "ceiling), got \"%s\"\n", optarg);
                return 2;
            }
            options.stop_within = x;
            break;
        }
        case 'h': s_help(stdout); return 0;
        default: s_help(stderr); return 2;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "profeed analyze: no input files (use - for standard input)\n");
        s_help(stderr);
        return 2;
    }
    options.reference_paths = references;
    options.reference_count = reference_count;
    options.baseline_paths = baselines;
    options.baseline_count = baseline_count;
    char *output = NULL, *error = NULL;
    profeed_result_t rc = profeed_analyze_files((const char *const *) argv + optind,
                                                (size_t) (argc - optind), &options, &output, &error);
    if (output) {
        fputs(output, stdout);
        if (options.format == PROFEED_FORMAT_JSON)
            fputc('\n', stdout);
    }
    if (error)
        fprintf(stderr, "profeed analyze: %s\n", error);
    else if (rc == PROFEED_ERROR)
        fprintf(stderr, "profeed analyze: out of memory\n");
    free(output);
    free(error);
    return (int) rc;
}
