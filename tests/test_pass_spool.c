/* The analyzer's spool of streamed passes (analyzer/worker/pass_spool.h,
 * issue 20): chunks in order become the pass's files byte for byte; a chunk
 * out of order, at the wrong offset or naming a path is refused with the
 * chunk named; chunk 0 starts a pass over; the folder goes with the spool.
 * A pass set to parse has its ncu pages parsed as the chunks come, with the
 * analysis of what it parsed equal to the offline one of the same files. */
#include "pass_spool.h"

#include <criterion/criterion.h>
#include "render.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char s_tmp[64];
static pass_chunk_codec_t *s_codec;

static void s_setup(void)
{
    snprintf(s_tmp, sizeof s_tmp, "/tmp/profeed-spool-test.XXXXXX");
    cr_assert_not_null(mkdtemp(s_tmp));
    setenv("TMPDIR", s_tmp, 1);
    s_codec = pass_chunk_codec_new(PASS_CHUNK_MIN_RAW, NULL);
    cr_assert_not_null(s_codec);
}

static void s_teardown(void)
{
    pass_chunk_codec_destroy(&s_codec);
    cr_expect_eq(rmdir(s_tmp), 0, "the spool left files behind in %s", s_tmp);
}

TestSuite(pass_spool, .init = s_setup, .fini = s_teardown);

/* A chunk of `text` (compressed), or with text NULL the pass's last chunk. */
typedef struct {
    Profeed__PassChunk c;
    uint8_t z[512];
    Profeed__PassOutput pass;
} chunk_t;

static Profeed__PassChunk *s_chunk(chunk_t *k, uint32_t seq, const char *file, uint64_t offset, const char *text)
{
    profeed__pass_chunk__init(&k->c);
    k->c.job_id = "job-1";
    k->c.pass_key = "ncu.000";
    k->c.has_seq = k->c.has_raw_size = k->c.has_compressed_size = 1;
    k->c.seq = seq;
    if (!text) {
        profeed__pass_output__init(&k->pass);
        k->c.has_last = k->c.last = 1;
        k->c.pass = &k->pass;
        return &k->c;
    }
    const uint8_t *z;
    size_t zlen;
    cr_assert_eq(pass_chunk_codec_pack(s_codec, text, strlen(text), &z, &zlen, NULL), PF_OK);
    cr_assert_leq(zlen, sizeof k->z);
    memcpy(k->z, z, zlen);
    k->c.file_name = (char *) file;
    k->c.has_offset = 1;
    k->c.offset = offset;
    k->c.raw_size = (uint32_t) strlen(text);
    k->c.compressed_size = (uint32_t) zlen;
    k->c.has_data = 1;
    k->c.data.data = k->z;
    k->c.data.len = zlen;
    return &k->c;
}

static char *s_slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s missing", path);
    static char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

Test(pass_spool, chunks_in_order_become_the_files)
{
    pass_spool_t *spool = pass_spool_new("job-1");
    chunk_t k;
    pass_spool_result_t r;
    pf_error_t err;
    cr_assert_eq(pass_spool_add(spool, s_codec, s_chunk(&k, 0, "raw.csv", 0, "\"ID\",\"Kernel\"\n"), &r, &err), PF_OK,
                 "%s", err.msg);
    cr_assert_eq(r, PASS_SPOOL_STORED);
    cr_assert_eq(pass_spool_add(spool, s_codec, s_chunk(&k, 1, "raw.csv", 14, "\"0\",\"k\"\n"), &r, &err), PF_OK,
                 "%s", err.msg);
    cr_assert_eq(pass_spool_add(spool, s_codec, s_chunk(&k, 2, "details.csv", 0, "d\n"), &r, &err), PF_OK, "%s",
                 err.msg);
    /* A resend of a chunk already written is acknowledged, not written again. */
    cr_assert_eq(pass_spool_add(spool, s_codec, s_chunk(&k, 1, "raw.csv", 14, "\"0\",\"k\"\n"), &r, &err), PF_OK);
    cr_assert_eq(r, PASS_SPOOL_DUPLICATE);
    cr_assert_eq(pass_spool_add(spool, s_codec, s_chunk(&k, 3, NULL, 0, NULL), &r, &err), PF_OK, "%s", err.msg);
    cr_assert_eq(r, PASS_SPOOL_PASS_DONE);
    char path[4096];
    cr_assert_str_eq(s_slurp(pass_spool_path(spool, "ncu.000", "raw.csv", path, sizeof path)),
                     "\"ID\",\"Kernel\"\n\"0\",\"k\"\n");
    cr_assert_str_eq(s_slurp(pass_spool_path(spool, "ncu.000", "details.csv", path, sizeof path)), "d\n");
    pass_spool_destroy(&spool);
    cr_assert_null(spool);
    struct stat st;
    cr_assert_neq(stat(path, &st), 0, "the spool's files outlive it");
}

Test(pass_spool, a_gap_a_wrong_offset_or_a_path_is_refused)
{
    pass_spool_t *spool = pass_spool_new("job-1");
    chunk_t k;
    pass_spool_result_t r;
    pf_error_t err;
    /* No chunk 0 yet. */
    cr_assert_eq(pass_spool_add(spool, s_codec, s_chunk(&k, 1, "raw.csv", 0, "x"), &r, &err), PF_EPROTO);
    cr_assert(strstr(err.msg, "job job-1 pass ncu.000 chunk 1: out of order"), "%s", err.msg);
    cr_assert_eq(pass_spool_add(spool, s_codec, s_chunk(&k, 0, "raw.csv", 0, "abc"), &r, &err), PF_OK);
    /* Chunk 2 before 1. */
    cr_assert_eq(pass_spool_add(spool, s_codec, s_chunk(&k, 2, "raw.csv", 3, "d"), &r, &err), PF_EPROTO);
    /* Bytes at an offset the file has not reached. */
    cr_assert_eq(pass_spool_add(spool, s_codec, s_chunk(&k, 1, "raw.csv", 7, "d"), &r, &err), PF_EPROTO);
    cr_assert(strstr(err.msg, "offset 7 in raw.csv, expected 3"), "%s", err.msg);
    /* A new file that does not start at 0. */
    cr_assert_eq(pass_spool_add(spool, s_codec, s_chunk(&k, 1, "det.csv", 5, "d"), &r, &err), PF_EPROTO);
    /* A name with a folder in it. */
    cr_assert_eq(pass_spool_add(spool, s_codec, s_chunk(&k, 1, "sub/det.csv", 0, "d"), &r, &err), PF_EBADINPUT);
    cr_assert(strstr(err.msg, "is not a plain name"), "%s", err.msg);
    pass_spool_destroy(&spool);
}

Test(pass_spool, chunk_zero_starts_the_pass_over)
{
    pass_spool_t *spool = pass_spool_new("job-1");
    chunk_t k;
    pass_spool_result_t r;
    pf_error_t err;
    cr_assert_eq(pass_spool_add(spool, s_codec, s_chunk(&k, 0, "raw.csv", 0, "old attempt, "), &r, &err), PF_OK);
    cr_assert_eq(pass_spool_add(spool, s_codec, s_chunk(&k, 1, "raw.csv", 13, "cut short"), &r, &err), PF_OK);
    /* The stream begins again (a new attempt): nothing of the old one stays. */
    cr_assert_eq(pass_spool_add(spool, s_codec, s_chunk(&k, 0, "raw.csv", 0, "new"), &r, &err), PF_OK, "%s", err.msg);
    cr_assert_eq(pass_spool_add(spool, s_codec, s_chunk(&k, 1, NULL, 0, NULL), &r, &err), PF_OK, "%s", err.msg);
    cr_assert_eq(r, PASS_SPOOL_PASS_DONE);
    char path[4096];
    cr_assert_str_eq(s_slurp(pass_spool_path(spool, "ncu.000", "raw.csv", path, sizeof path)), "new");
    pass_spool_destroy(&spool);
}

/* Streams `path` into the spool as pass ncu.000's file `name`, in chunks of
 * `size` raw bytes compressed by `codec`, from `*seq` on. */
static void s_stream_file(pass_spool_t *spool, pass_chunk_codec_t *codec, const char *path, const char *name,
                          size_t size, uint32_t *seq)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s missing", path);
    char *buf = malloc(size);
    cr_assert_not_null(buf);
    uint64_t offset = 0;
    size_t n;
    while ((n = fread(buf, 1, size, f)) > 0) {
        const uint8_t *z;
        size_t zlen;
        cr_assert_eq(pass_chunk_codec_pack(codec, buf, n, &z, &zlen, NULL), PF_OK);
        Profeed__PassChunk c;
        profeed__pass_chunk__init(&c);
        c.job_id = "job-1";
        c.pass_key = "ncu.000";
        c.has_seq = c.has_offset = c.has_raw_size = c.has_compressed_size = c.has_data = 1;
        c.seq = (*seq)++;
        c.file_name = (char *) name;
        c.offset = offset;
        c.raw_size = (uint32_t) n;
        c.compressed_size = (uint32_t) zlen;
        c.data.data = (uint8_t *) z;
        c.data.len = zlen;
        pass_spool_result_t r;
        pf_error_t err;
        cr_assert_eq(pass_spool_add(spool, codec, &c, &r, &err), PF_OK, "%s", err.msg);
        offset += n;
    }
    free(buf);
    fclose(f);
}

static char *s_read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s missing", path);
    cr_assert_eq(fseek(f, 0, SEEK_END), 0);
    long size = ftell(f);
    cr_assert_gt(size, 0);
    rewind(f);
    char *bytes = malloc((size_t) size);
    cr_assert_not_null(bytes);
    cr_assert_eq(fread(bytes, 1, (size_t) size, f), (size_t) size);
    fclose(f);
    *len = (size_t) size;
    return bytes;
}

static char *s_analyze_json(const analyzer_file_t *files, size_t count)
{
    analyzer_input_t input = {.files = files, .count = count, .profiler = "ncu", .threads = 1};
    analysis_options_t options;
    analysis_options_default(&options);
    feedback_t *fb = NULL;
    pf_error_t err;
    cr_assert_eq(analyzer_run(&input, &options, &fb, &err), PF_OK, "%s", err.msg);
    char *json = render_json(fb, false);
    feedback_destroy(&fb);
    return json;
}

Test(pass_spool, a_parsing_pass_parses_its_pages_as_they_come)
{
    const char *raw = PF_FIXTURE_DIR "/ncu/h200/full_raw.csv", *det = PF_FIXTURE_DIR "/ncu/h200/full_details.csv";
    pass_chunk_codec_t *codec = pass_chunk_codec_new(16 * 1024, NULL);
    cr_assert_not_null(codec);
    pass_spool_t *spool = pass_spool_new("job-1");
    pass_spool_set_parse(spool, PROFEED__PROFILER__PROFILER_NCU, false);
    uint32_t seq = 0;
    /* Chunks of 16 KiB cut the pages' rows and quoted fields anywhere. */
    s_stream_file(spool, codec, raw, "full_raw.csv", 16 * 1024, &seq);
    s_stream_file(spool, codec, det, "full_details.csv", 16 * 1024, &seq);
    chunk_t k;
    pass_spool_result_t r;
    pf_error_t err;
    cr_assert_eq(pass_spool_add(spool, codec, s_chunk(&k, seq, NULL, 0, NULL), &r, &err), PF_OK, "%s", err.msg);
    cr_assert_eq(r, PASS_SPOOL_PASS_DONE);
    analyzer_file_t streamed[2] = {{.pass_key = "ncu.000", .name = "full_raw.csv"},
                                   {.pass_key = "ncu.000", .name = "full_details.csv"}};
    char path[4096];
    for (size_t i = 0; i < 2; i++) {
        cr_assert_eq(pass_spool_file(spool, "ncu.000", streamed[i].name, &streamed[i], path, sizeof path, &err),
                     PF_OK, "%s", err.msg);
        cr_assert_not_null(streamed[i].parsed, "%s was not parsed as it came", streamed[i].name);
        cr_assert_null(streamed[i].path);
    }
    /* The same pages whole, as a pass that came in one message. */
    size_t raw_len, det_len;
    char *raw_bytes = s_read_all(raw, &raw_len), *det_bytes = s_read_all(det, &det_len);
    analyzer_file_t offline[2] = {{.pass_key = "ncu.000", .name = "full_raw.csv", .bytes = raw_bytes, .len = raw_len},
                                  {.pass_key = "ncu.000", .name = "full_details.csv", .bytes = det_bytes, .len = det_len}};
    char *a = s_analyze_json(streamed, 2), *b = s_analyze_json(offline, 2);
    cr_assert_str_eq(a, b, "the pages parsed as they came analyze otherwise than the files");
    /* In the other order too: the analysis merges them in the list's order. */
    analyzer_file_t swapped[2] = {streamed[1], streamed[0]}, offline_swapped[2] = {offline[1], offline[0]};
    char *c = s_analyze_json(swapped, 2), *d = s_analyze_json(offline_swapped, 2);
    cr_assert_str_eq(c, d);
    free(a);
    free(b);
    free(c);
    free(d);
    free(raw_bytes);
    free(det_bytes);
    pass_spool_destroy(&spool);
    pass_chunk_codec_destroy(&codec);
}

Test(pass_spool, a_page_that_does_not_parse_keeps_its_error)
{
    pass_spool_t *spool = pass_spool_new("job-1");
    pass_spool_set_parse(spool, PROFEED__PROFILER__PROFILER_NCU, false);
    chunk_t k;
    pass_spool_result_t r;
    pf_error_t err;
    cr_assert_eq(pass_spool_add(spool, s_codec, s_chunk(&k, 0, "raw.csv", 0, "\"ID\",\"Kernel\n\"0\",\"k\"\n"), &r, &err),
                 PF_OK, "%s", err.msg);
    /* Later bytes are still taken (the stream goes on; the job fails). */
    cr_assert_eq(pass_spool_add(spool, s_codec, s_chunk(&k, 1, "raw.csv", 21, "more\n"), &r, &err), PF_OK, "%s",
                 err.msg);
    cr_assert_eq(pass_spool_add(spool, s_codec, s_chunk(&k, 2, NULL, 0, NULL), &r, &err), PF_OK, "%s", err.msg);
    analyzer_file_t file = {0};
    char path[4096];
    cr_assert_neq(pass_spool_file(spool, "ncu.000", "raw.csv", &file, path, sizeof path, &err), PF_OK);
    cr_assert(strstr(err.msg, "pass ncu.000: raw.csv"), "the error does not name the file: %s", err.msg);
    pass_spool_destroy(&spool);
}

Test(pass_spool, a_file_twice_in_a_pass_is_refused)
{
    pass_spool_t *spool = pass_spool_new("job-1");
    pass_spool_set_parse(spool, PROFEED__PROFILER__PROFILER_NCU, false);
    chunk_t k;
    pass_spool_result_t r;
    pf_error_t err;
    cr_assert_eq(pass_spool_add(spool, s_codec, s_chunk(&k, 0, "a.csv", 0, "x"), &r, &err), PF_OK, "%s", err.msg);
    cr_assert_eq(pass_spool_add(spool, s_codec, s_chunk(&k, 1, "b.csv", 0, "y"), &r, &err), PF_OK, "%s", err.msg);
    cr_assert_eq(pass_spool_add(spool, s_codec, s_chunk(&k, 2, "a.csv", 0, "z"), &r, &err), PF_EBADINPUT);
    cr_assert(strstr(err.msg, "file a.csv comes a second time"), "%s", err.msg);
    pass_spool_destroy(&spool);
}

/* Streams the H200 capture's raw and details pages as one pass of a spool
 * set to parse ncu pages, `once` or not. */
static pass_spool_t *s_stream_capture(bool once)
{
    pass_chunk_codec_t *codec = pass_chunk_codec_new(16 * 1024, NULL);
    cr_assert_not_null(codec);
    pass_spool_t *spool = pass_spool_new("job-1");
    pass_spool_set_once(spool, once);
    pass_spool_set_parse(spool, PROFEED__PROFILER__PROFILER_NCU, false);
    uint32_t seq = 0;
    s_stream_file(spool, codec, PF_FIXTURE_DIR "/ncu/h200/full_raw.csv", "full_raw.csv", 16 * 1024, &seq);
    s_stream_file(spool, codec, PF_FIXTURE_DIR "/ncu/h200/full_details.csv", "full_details.csv", 16 * 1024, &seq);
    chunk_t k;
    pass_spool_result_t r;
    pf_error_t err;
    cr_assert_eq(pass_spool_add(spool, codec, s_chunk(&k, seq, NULL, 0, NULL), &r, &err), PF_OK, "%s", err.msg);
    cr_assert_eq(r, PASS_SPOOL_PASS_DONE);
    pass_chunk_codec_destroy(&codec);
    return spool;
}

/* The worker's spool (pass_spool_set_once): the details page parses into the
 * raw page's data set, and the analysis of the pages in their streamed order
 * is the analysis of the files. */
Test(pass_spool, a_once_spool_holds_a_pass_once_and_analyzes_as_the_files)
{
    pass_spool_t *spool = s_stream_capture(true);
    analyzer_file_t streamed[2] = {{.pass_key = "ncu.000", .name = "full_raw.csv"},
                                   {.pass_key = "ncu.000", .name = "full_details.csv"}};
    char path[4096];
    pf_error_t err;
    for (size_t i = 0; i < 2; i++)
        cr_assert_eq(pass_spool_file(spool, "ncu.000", streamed[i].name, &streamed[i], path, sizeof path, &err),
                     PF_OK, "%s", err.msg);
    size_t raw_len, det_len;
    char *raw_bytes = s_read_all(PF_FIXTURE_DIR "/ncu/h200/full_raw.csv", &raw_len);
    char *det_bytes = s_read_all(PF_FIXTURE_DIR "/ncu/h200/full_details.csv", &det_len);
    analyzer_file_t offline[2] = {{.pass_key = "ncu.000", .name = "full_raw.csv", .bytes = raw_bytes, .len = raw_len},
                                  {.pass_key = "ncu.000", .name = "full_details.csv", .bytes = det_bytes, .len = det_len}};
    char *a = s_analyze_json(streamed, 2), *b = s_analyze_json(offline, 2);
    cr_assert_str_eq(a, b, "the pages parsed into one set analyze otherwise than the files");
    free(a);
    free(b);
    free(raw_bytes);
    free(det_bytes);
    pass_spool_destroy(&spool);
}

/* Pages parsed into one set cannot be taken apart again: listed in another
 * order than they streamed, the analysis says so instead of answering for
 * the streamed order. */
Test(pass_spool, a_once_spool_refuses_its_pages_out_of_their_order)
{
    pass_spool_t *spool = s_stream_capture(true);
    analyzer_file_t swapped[2] = {{.pass_key = "ncu.000", .name = "full_details.csv"},
                                  {.pass_key = "ncu.000", .name = "full_raw.csv"}};
    char path[4096];
    pf_error_t err;
    for (size_t i = 0; i < 2; i++)
        cr_assert_eq(pass_spool_file(spool, "ncu.000", swapped[i].name, &swapped[i], path, sizeof path, &err),
                     PF_OK, "%s", err.msg);
    analyzer_input_t input = {.files = swapped, .count = 2, .profiler = "ncu", .threads = 1};
    analysis_options_t options;
    analysis_options_default(&options);
    feedback_t *fb = NULL;
    cr_assert_eq(analyzer_run(&input, &options, &fb, &err), PF_EBADINPUT);
    cr_assert_null(fb);
    cr_assert(strstr(err.msg, "pass ncu.000: full_details.csv: streamed right after another page"), "%s", err.msg);
    pass_spool_destroy(&spool);
}
