#include "pass_chunk.h"

#include <assert.h>
#include <stdlib.h>
#include <zstd.h>

struct pass_chunk_codec_t {
    size_t max_raw;
    /* Made at first use: a collector only packs and an analyzer only unpacks,
     * so each holds one side's context and buffer. */
    ZSTD_CCtx *cctx;
    uint8_t *zbuf; /* ZSTD_compressBound(max_raw) bytes */
    size_t zcap;
    ZSTD_DCtx *dctx;
    uint8_t *raw; /* max_raw bytes */
};

pass_chunk_codec_t *pass_chunk_codec_new(size_t max_raw, pf_error_t *err)
{
    if (max_raw < PASS_CHUNK_MIN_RAW || max_raw > PASS_CHUNK_MAX_RAW) {
        pf_error_set(err, PF_EBADINPUT, "chunk size %zu bytes: expected %zu to %zu", max_raw, PASS_CHUNK_MIN_RAW,
                     PASS_CHUNK_MAX_RAW);
        return NULL;
    }
    pass_chunk_codec_t *self = calloc(1, sizeof *self);
    if (!self) {
        pf_error_set(err, PF_ENOMEM, "out of memory for a chunk codec");
        return NULL;
    }
    self->max_raw = max_raw;
    return self;
}

void pass_chunk_codec_destroy(pass_chunk_codec_t **self_p)
{
    assert(self_p);
    pass_chunk_codec_t *self = *self_p;
    if (!self)
        return;
    ZSTD_freeCCtx(self->cctx);
    ZSTD_freeDCtx(self->dctx);
    free(self->zbuf);
    free(self->raw);
    free(self);
    *self_p = NULL;
}

size_t pass_chunk_codec_max_raw(const pass_chunk_codec_t *self)
{
    assert(self);
    return self->max_raw;
}

pf_status_t pass_chunk_codec_pack(pass_chunk_codec_t *self, const void *raw, size_t len, const uint8_t **out,
                                  size_t *out_len, pf_error_t *err)
{
    assert(self && out && out_len && (raw || len == 0));
    assert(len <= self->max_raw && "pass_chunk_codec_pack: the caller cuts chunks at max_raw");
    if (!self->cctx) {
        self->zcap = ZSTD_compressBound(self->max_raw);
        self->cctx = ZSTD_createCCtx();
        self->zbuf = malloc(self->zcap);
        if (!self->cctx || !self->zbuf)
            return pf_error_set(err, PF_ENOMEM, "out of memory for chunk compression (%zu bytes)", self->zcap);
        /* The content size goes into the frame header (ZSTD_compress2 does it
         * for a one-shot call): the receiver checks it before decompressing. */
        ZSTD_CCtx_setParameter(self->cctx, ZSTD_c_compressionLevel, PASS_CHUNK_LEVEL);
        ZSTD_CCtx_setParameter(self->cctx, ZSTD_c_contentSizeFlag, 1);
        ZSTD_CCtx_setParameter(self->cctx, ZSTD_c_checksumFlag, 1);
    }
    size_t n = ZSTD_compress2(self->cctx, self->zbuf, self->zcap, raw ? raw : "", len);
    if (ZSTD_isError(n))
        return pf_error_set(err, PF_EIO, "cannot compress a %zu-byte chunk: %s", len, ZSTD_getErrorName(n));
    *out = self->zbuf;
    *out_len = n;
    return PF_OK;
}

pf_status_t pass_chunk_codec_unpack(pass_chunk_codec_t *self, const Profeed__PassChunk *chunk, const uint8_t **raw,
                                    size_t *raw_len, pf_error_t *err)
{
    assert(self && chunk && raw && raw_len);
    const char *job = chunk->job_id ? chunk->job_id : "?";
    const char *pass = chunk->pass_key ? chunk->pass_key : "?";
    unsigned seq = (unsigned) chunk->seq;
    size_t declared = chunk->raw_size;
    size_t zlen = chunk->has_data ? chunk->data.len : 0;
    if (declared > self->max_raw) {
        return pf_error_set(err, PF_ETOOBIG, "job %s pass %s chunk %u: raw_size %zu is over the %zu-byte chunk limit",
                            job, pass, seq, declared, self->max_raw);
    }
    if (!chunk->has_compressed_size || chunk->compressed_size != zlen) {
        return pf_error_set(err, PF_EBADINPUT, "job %s pass %s chunk %u: compressed_size %u is not the %zu bytes of data",
                            job, pass, seq, (unsigned) chunk->compressed_size, zlen);
    }
    if (zlen == 0) {
        if (declared != 0)
            return pf_error_set(err, PF_EBADINPUT, "job %s pass %s chunk %u: no data for a raw_size of %zu", job, pass,
                                seq, declared);
        *raw = (const uint8_t *) "";
        *raw_len = 0;
        return PF_OK;
    }
    /* What the frame says of itself, before a byte is decompressed. */
    const uint8_t *z = chunk->data.data;
    unsigned long long content = ZSTD_getFrameContentSize(z, zlen);
    if (content == ZSTD_CONTENTSIZE_ERROR)
        return pf_error_set(err, PF_EBADINPUT, "job %s pass %s chunk %u: data is not a zstd frame", job, pass, seq);
    if (content == ZSTD_CONTENTSIZE_UNKNOWN) {
        return pf_error_set(err, PF_EBADINPUT,
                            "job %s pass %s chunk %u: the zstd frame does not state its content size", job, pass, seq);
    }
    if (content != declared) {
        return pf_error_set(err, PF_EBADINPUT, "job %s pass %s chunk %u: the zstd frame holds %llu bytes, raw_size says %zu",
                            job, pass, seq, content, declared);
    }
    size_t frame = ZSTD_findFrameCompressedSize(z, zlen);
    if (ZSTD_isError(frame) || frame != zlen) {
        return pf_error_set(err, PF_EBADINPUT, "job %s pass %s chunk %u: data is not exactly one whole zstd frame (%s)",
                            job, pass, seq, ZSTD_isError(frame) ? ZSTD_getErrorName(frame) : "bytes after the frame");
    }
    if (!self->dctx) {
        self->dctx = ZSTD_createDCtx();
        self->raw = malloc(self->max_raw);
        if (!self->dctx || !self->raw)
            return pf_error_set(err, PF_ENOMEM, "out of memory for chunk decompression (%zu bytes)", self->max_raw);
    }
    /* The destination is the declared size: zstd stops with an error rather
     * than write past it, whatever the frame's blocks claim. */
    size_t n = ZSTD_decompressDCtx(self->dctx, self->raw, declared, z, zlen);
    if (ZSTD_isError(n)) {
        return pf_error_set(err, PF_EBADINPUT, "job %s pass %s chunk %u: cannot decompress: %s", job, pass, seq,
                            ZSTD_getErrorName(n));
    }
    if (n != declared) {
        return pf_error_set(err, PF_EBADINPUT, "job %s pass %s chunk %u: decompressed to %zu bytes, raw_size says %zu",
                            job, pass, seq, n, declared);
    }
    *raw = self->raw;
    *raw_len = n;
    return PF_OK;
}
