/* Pass chunks (common/pass_chunk.h, issue 20): a real capture survives being
 * cut, compressed and put back together byte for byte; a chunk whose sizes
 * lie, whose frame hides or overstates its size (a zip bomb), or that holds
 * anything but one whole frame is refused with the job, pass and chunk named,
 * before it is decompressed; and the wire refuses malformed chunk messages. */
#include "pass_chunk.h"
#include "test_util.h"
#include "wire.h"

#include <criterion/criterion.h>
#include <string.h>
#include <zstd.h>

#define FIXTURE(name) PF_FIXTURE_DIR "/ncu/h200/" name

static void s_chunk_init(Profeed__PassChunk *c, const uint8_t *z, size_t zlen, size_t raw)
{
    profeed__pass_chunk__init(c);
    c->job_id = "job-1";
    c->pass_key = "ncu.000";
    c->has_seq = 1;
    c->seq = 7;
    c->file_name = "full_raw.csv";
    c->has_raw_size = c->has_compressed_size = 1;
    c->raw_size = (uint32_t) raw;
    c->compressed_size = (uint32_t) zlen;
    c->has_data = zlen > 0;
    c->data.data = (uint8_t *) z;
    c->data.len = zlen;
}

Test(pass_chunk, a_real_capture_survives_chunking_byte_for_byte)
{
    size_t len;
    char *csv = test_read_file(FIXTURE("full_raw.csv"), &len);
    pf_error_t err;
    pass_chunk_codec_t *tx = pass_chunk_codec_new(64 * 1024, &err);
    pass_chunk_codec_t *rx = pass_chunk_codec_new(64 * 1024, &err);
    cr_assert(tx && rx, "%s", err.msg);
    char *back = malloc(len);
    cr_assert_not_null(back);
    size_t at = 0, zbytes = 0, chunks = 0;
    while (at < len) {
        size_t n = len - at < 64 * 1024 ? len - at : 64 * 1024;
        const uint8_t *z;
        size_t zlen;
        cr_assert_eq(pass_chunk_codec_pack(tx, csv + at, n, &z, &zlen, &err), PF_OK, "%s", err.msg);
        Profeed__PassChunk c;
        s_chunk_init(&c, z, zlen, n);
        const uint8_t *raw;
        size_t raw_len;
        cr_assert_eq(pass_chunk_codec_unpack(rx, &c, &raw, &raw_len, &err), PF_OK, "%s", err.msg);
        cr_assert_eq(raw_len, n);
        memcpy(back + at, raw, n);
        at += n;
        zbytes += zlen;
        chunks++;
    }
    cr_assert_eq(memcmp(back, csv, len), 0);
    cr_assert_eq(chunks, (len + 65535) / 65536);
    /* NCU CSV repeats its columns' units and names per row: it compresses. */
    cr_expect_lt(zbytes * 4, len, "%zu bytes compressed to %zu", len, zbytes);
    free(back);
    free(csv);
    pass_chunk_codec_destroy(&tx);
    pass_chunk_codec_destroy(&rx);
    cr_assert_null(tx);
    pass_chunk_codec_destroy(&tx); /* a no-op on NULL */
}

/* 32 MiB of zeros compress to about a kilobyte. */
static uint8_t *s_bomb(size_t raw, size_t *zlen_p)
{
    uint8_t *zeros = calloc(1, raw);
    size_t cap = ZSTD_compressBound(raw);
    uint8_t *z = malloc(cap);
    cr_assert(zeros && z);
    size_t n = ZSTD_compress(z, cap, zeros, raw, 1);
    cr_assert(!ZSTD_isError(n));
    free(zeros);
    *zlen_p = n;
    return z;
}

Test(pass_chunk, a_zip_bomb_that_says_its_size_is_refused_before_decompressing)
{
    size_t zlen;
    uint8_t *z = s_bomb(32 * 1024 * 1024, &zlen);
    cr_assert_lt(zlen, 64 * 1024);
    pf_error_t err;
    pass_chunk_codec_t *rx = pass_chunk_codec_new(PASS_CHUNK_DEFAULT_RAW, &err);
    Profeed__PassChunk c;
    s_chunk_init(&c, z, zlen, 32 * 1024 * 1024);
    const uint8_t *raw;
    size_t raw_len;
    cr_assert_eq(pass_chunk_codec_unpack(rx, &c, &raw, &raw_len, &err), PF_ETOOBIG);
    cr_assert(strstr(err.msg, "job job-1 pass ncu.000 chunk 7: raw_size 33554432 is over the 4194304-byte chunk limit"),
              "%s", err.msg);
    free(z);
    pass_chunk_codec_destroy(&rx);
}

Test(pass_chunk, a_zip_bomb_that_understates_its_size_is_refused_by_its_frame_header)
{
    size_t zlen;
    uint8_t *z = s_bomb(32 * 1024 * 1024, &zlen);
    pf_error_t err;
    pass_chunk_codec_t *rx = pass_chunk_codec_new(PASS_CHUNK_DEFAULT_RAW, &err);
    Profeed__PassChunk c;
    s_chunk_init(&c, z, zlen, 1000);
    const uint8_t *raw;
    size_t raw_len;
    cr_assert_eq(pass_chunk_codec_unpack(rx, &c, &raw, &raw_len, &err), PF_EBADINPUT);
    cr_assert(strstr(err.msg, "the zstd frame holds 33554432 bytes, raw_size says 1000"), "%s", err.msg);
    free(z);
    pass_chunk_codec_destroy(&rx);
}

Test(pass_chunk, a_frame_that_hides_its_size_is_refused)
{
    /* Streaming compression without a pledged size leaves the header's
     * content size out: nothing to check before decompressing, so refused. */
    const char text[] = "ID,Kernel Name\n1,atomic_hist\n";
    ZSTD_CCtx *cctx = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 0);
    uint8_t z[256];
    ZSTD_outBuffer out = {z, sizeof z, 0};
    ZSTD_inBuffer in = {text, sizeof text - 1, 0};
    cr_assert_eq(ZSTD_compressStream2(cctx, &out, &in, ZSTD_e_end), 0);
    ZSTD_freeCCtx(cctx);
    pf_error_t err;
    pass_chunk_codec_t *rx = pass_chunk_codec_new(PASS_CHUNK_DEFAULT_RAW, &err);
    Profeed__PassChunk c;
    s_chunk_init(&c, z, out.pos, sizeof text - 1);
    const uint8_t *raw;
    size_t raw_len;
    cr_assert_eq(pass_chunk_codec_unpack(rx, &c, &raw, &raw_len, &err), PF_EBADINPUT);
    cr_assert(strstr(err.msg, "does not state its content size"), "%s", err.msg);
    pass_chunk_codec_destroy(&rx);
}

Test(pass_chunk, sizes_that_disagree_with_the_data_are_refused)
{
    pf_error_t err;
    pass_chunk_codec_t *codec = pass_chunk_codec_new(PASS_CHUNK_MIN_RAW, &err);
    const char text[] = "ID,Kernel Name\n1,atomic_hist\n";
    const uint8_t *z;
    size_t zlen;
    cr_assert_eq(pass_chunk_codec_pack(codec, text, sizeof text - 1, &z, &zlen, &err), PF_OK);
    uint8_t frame[512];
    cr_assert_lt(zlen + 3, sizeof frame);
    memcpy(frame, z, zlen);
    const uint8_t *raw;
    size_t raw_len;
    Profeed__PassChunk c;

    s_chunk_init(&c, frame, zlen, sizeof text - 1);
    c.compressed_size = (uint32_t) zlen + 1;
    cr_assert_eq(pass_chunk_codec_unpack(codec, &c, &raw, &raw_len, &err), PF_EBADINPUT);
    cr_assert(strstr(err.msg, "is not the"), "%s", err.msg);

    memcpy(frame + zlen, "abc", 3); /* bytes after the frame */
    s_chunk_init(&c, frame, zlen + 3, sizeof text - 1);
    cr_assert_eq(pass_chunk_codec_unpack(codec, &c, &raw, &raw_len, &err), PF_EBADINPUT);
    cr_assert(strstr(err.msg, "not exactly one whole zstd frame"), "%s", err.msg);

    s_chunk_init(&c, frame, zlen - 2, sizeof text - 1); /* cut short */
    cr_assert_eq(pass_chunk_codec_unpack(codec, &c, &raw, &raw_len, &err), PF_EBADINPUT);
    cr_assert(strstr(err.msg, "not exactly one whole zstd frame"), "%s", err.msg);

    frame[zlen - 1] ^= 0x55; /* the frame's checksum no longer matches */
    s_chunk_init(&c, frame, zlen, sizeof text - 1);
    cr_assert_eq(pass_chunk_codec_unpack(codec, &c, &raw, &raw_len, &err), PF_EBADINPUT);
    cr_assert(strstr(err.msg, "cannot decompress"), "%s", err.msg);

    s_chunk_init(&c, (const uint8_t *) "not zstd", 8, 8);
    cr_assert_eq(pass_chunk_codec_unpack(codec, &c, &raw, &raw_len, &err), PF_EBADINPUT);
    cr_assert(strstr(err.msg, "not a zstd frame"), "%s", err.msg);

    s_chunk_init(&c, NULL, 0, 5);
    cr_assert_eq(pass_chunk_codec_unpack(codec, &c, &raw, &raw_len, &err), PF_EBADINPUT);
    s_chunk_init(&c, NULL, 0, 0); /* a chunk without bytes: the end of an empty pass */
    cr_assert_eq(pass_chunk_codec_unpack(codec, &c, &raw, &raw_len, &err), PF_OK);
    cr_assert_eq(raw_len, 0);
    pass_chunk_codec_destroy(&codec);
}

Test(pass_chunk, a_chunk_size_setting_out_of_range_is_refused)
{
    pf_error_t err;
    cr_assert_null(pass_chunk_codec_new(PASS_CHUNK_MIN_RAW - 1, &err));
    cr_assert(strstr(err.msg, "chunk size"), "%s", err.msg);
    cr_assert_null(pass_chunk_codec_new(PASS_CHUNK_MAX_RAW + 1, &err));
}

/* ---------------------------------------------------------------------------
 * The messages on the wire */

static pf_status_t s_round_trip(Profeed__PassChunk *c, pf_error_t *err)
{
    Profeed__Envelope env;
    wire_envelope_init(&env);
    env.body_case = PROFEED__ENVELOPE__BODY_PASS_CHUNK;
    env.pass_chunk = c;
    size_t size;
    /* Packed without wire's checks, as a hostile peer would, then unpacked. */
    size = protobuf_c_message_get_packed_size(&env.base);
    uint8_t *bytes = malloc(size);
    cr_assert_not_null(bytes);
    protobuf_c_message_pack(&env.base, bytes);
    Profeed__Envelope *back = wire_envelope_unpack(bytes, size, WIRE_MAX_MSG, err);
    free(bytes);
    pf_status_t rc = back ? PF_OK : err->code;
    wire_envelope_destroy(&back);
    return rc;
}

Test(pass_chunk_wire, a_last_chunk_carries_the_pass_without_contents)
{
    Profeed__WorkerInfo worker;
    profeed__worker_info__init(&worker);
    worker.host = "gpu-host-1";
    Profeed__File file;
    profeed__file__init(&file);
    file.name = "full_raw.csv";
    Profeed__File *files[] = {&file};
    Profeed__PassOutput pass;
    profeed__pass_output__init(&pass);
    pass.job_id = "job-1";
    pass.pass_key = "ncu.000";
    pass.has_exit_status = 1;
    pass.worker = &worker;
    pass.files = files;
    pass.n_files = 1;
    Profeed__PassChunk c;
    s_chunk_init(&c, (const uint8_t *) "zz", 2, 2);
    pf_error_t err;
    /* Not last, yet with the pass. */
    c.pass = &pass;
    cr_assert_eq(s_round_trip(&c, &err), PF_EBADINPUT);
    cr_assert(strstr(err.msg, "Envelope.pass_chunk.pass: set on a chunk that is not the last"), "%s", err.msg);
    c.has_last = c.last = 1;
    cr_assert_eq(s_round_trip(&c, &err), PF_OK, "%s", err.msg);
    /* Last without the pass. */
    c.pass = NULL;
    cr_assert_eq(s_round_trip(&c, &err), PF_EBADINPUT);
    cr_assert(strstr(err.msg, "missing on the last chunk"), "%s", err.msg);
    /* The pass's files must not carry bytes: they came in chunks. */
    c.pass = &pass;
    file.has_content = 1;
    file.content.data = (uint8_t *) "x";
    file.content.len = 1;
    cr_assert_eq(s_round_trip(&c, &err), PF_EBADINPUT);
    cr_assert(strstr(err.msg, "files[0].content: set"), "%s", err.msg);
    file.has_content = 0;
    /* Another job's pass. */
    pass.job_id = "job-2";
    cr_assert_eq(s_round_trip(&c, &err), PF_EBADINPUT);
    cr_assert(strstr(err.msg, "differ from the chunk's"), "%s", err.msg);
}

Test(pass_chunk_wire, sizes_names_and_numbers_are_checked)
{
    Profeed__PassChunk c;
    pf_error_t err;
    s_chunk_init(&c, (const uint8_t *) "zz", 2, 2);
    cr_assert_eq(s_round_trip(&c, &err), PF_OK, "%s", err.msg);
    c.has_seq = 0;
    cr_assert_eq(s_round_trip(&c, &err), PF_EBADINPUT);
    cr_assert(strstr(err.msg, "Envelope.pass_chunk.seq: missing"), "%s", err.msg);
    s_chunk_init(&c, (const uint8_t *) "zz", 2, 2);
    c.compressed_size = 3;
    cr_assert_eq(s_round_trip(&c, &err), PF_EBADINPUT);
    cr_assert(strstr(err.msg, "compressed_size: 3, but data holds 2 bytes"), "%s", err.msg);
    s_chunk_init(&c, (const uint8_t *) "zz", 2, WIRE_MAX_CHUNK_RAW + 1);
    cr_assert_eq(s_round_trip(&c, &err), PF_ETOOBIG);
    cr_assert(strstr(err.msg, "raw_size"), "%s", err.msg);
    s_chunk_init(&c, (const uint8_t *) "zz", 2, 2);
    c.file_name = "../etc/passwd";
    cr_assert_eq(s_round_trip(&c, &err), PF_EBADINPUT);
    cr_assert(strstr(err.msg, "file_name"), "%s", err.msg);
    c.file_name = NULL;
    cr_assert_eq(s_round_trip(&c, &err), PF_EBADINPUT);
    cr_assert(strstr(err.msg, "which file the data continues"), "%s", err.msg);
    s_chunk_init(&c, (const uint8_t *) "zz", 2, 2);
    c.job_id = NULL;
    cr_assert_eq(s_round_trip(&c, &err), PF_EBADINPUT);
    s_chunk_init(&c, (const uint8_t *) "zz", 2, 2);
    c.has_attempt = 1;
    c.attempt = 0;
    cr_assert_eq(s_round_trip(&c, &err), PF_EBADINPUT);
}

Test(pass_chunk_wire, a_chunk_ack_names_its_pass_and_sequence_number)
{
    Profeed__ChunkAck a;
    profeed__chunk_ack__init(&a);
    a.job_id = "job-1";
    a.pass_key = "ncu.000";
    Profeed__Envelope env;
    wire_envelope_init(&env);
    env.body_case = PROFEED__ENVELOPE__BODY_CHUNK_ACK;
    env.chunk_ack = &a;
    size_t size;
    pf_error_t err;
    cr_assert_null(wire_envelope_pack(&env, WIRE_MAX_MSG, &size, &err));
    cr_assert(strstr(err.msg, "Envelope.chunk_ack.seq: missing"), "%s", err.msg);
    a.has_seq = 1;
    a.seq = 3;
    uint8_t *bytes = wire_envelope_pack(&env, WIRE_MAX_MSG, &size, &err);
    cr_assert_not_null(bytes, "%s", err.msg);
    Profeed__Envelope *back = wire_envelope_unpack(bytes, size, WIRE_MAX_MSG, &err);
    cr_assert_not_null(back, "%s", err.msg);
    cr_assert_eq(back->chunk_ack->seq, 3);
    cr_assert_str_eq(back->chunk_ack->pass_key, "ncu.000");
    wire_envelope_destroy(&back);
    free(bytes);
}

/* A Dispatch of a chunk to an analyzer is checked as one of a whole pass is:
 * its pass count, and the job's context the last chunk carries. */
Test(pass_chunk_wire, a_chunk_dispatch_checks_its_context)
{
    Profeed__PassChunk c;
    s_chunk_init(&c, (const uint8_t *) "zz", 2, 2);
    Profeed__AnalysisContext context;
    profeed__analysis_context__init(&context);
    context.plan = "core";
    Profeed__Dispatch d;
    profeed__dispatch__init(&d);
    d.work_case = PROFEED__DISPATCH__WORK_PASS_CHUNK;
    d.pass_chunk = &c;
    d.has_pass_count = 1;
    d.pass_count = 1;
    d.context = &context;
    Profeed__Envelope env;
    wire_envelope_init(&env);
    env.body_case = PROFEED__ENVELOPE__BODY_DISPATCH;
    env.dispatch = &d;
    pf_error_t err;
    struct {
        const char *plan, *baseline, *want;
    } cases[] = {
        {"core", "job-0", NULL},
        {"core\nrm -rf /", "job-0", "context.plan"},
        {"core", "../job", "context.baseline_job_id"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        context.plan = (char *) cases[i].plan;
        context.baseline_job_id = (char *) cases[i].baseline;
        size_t size = protobuf_c_message_get_packed_size(&env.base);
        uint8_t *bytes = malloc(size);
        cr_assert_not_null(bytes);
        protobuf_c_message_pack(&env.base, bytes);
        Profeed__Envelope *back = wire_envelope_unpack(bytes, size, WIRE_MAX_MSG, &err);
        free(bytes);
        if (!cases[i].want)
            cr_assert_not_null(back, "case %zu: %s", i, err.msg);
        else
            cr_assert(!back && strstr(err.msg, cases[i].want), "case %zu: %s", i, back ? "accepted" : err.msg);
        wire_envelope_destroy(&back);
    }
    d.has_pass_count = 0;
    context.plan = "core";
    context.baseline_job_id = NULL;
    size_t size = protobuf_c_message_get_packed_size(&env.base);
    uint8_t *bytes = malloc(size);
    cr_assert_not_null(bytes);
    protobuf_c_message_pack(&env.base, bytes);
    Profeed__Envelope *back = wire_envelope_unpack(bytes, size, WIRE_MAX_MSG, &err);
    free(bytes);
    cr_assert(!back && strstr(err.msg, "pass_count"), "%s", back ? "accepted" : err.msg);
}
