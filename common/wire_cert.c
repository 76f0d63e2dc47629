#include "wire_cert.h"

#include <string.h>

#include "file_read.h"

#define KEYGEN_HINT "(make one with `profeed keygen NAME`)"

/* Decodes a key as ZPL holds it: exactly 40 Z85 characters. */
static bool s_key(const char *txt, uint8_t out[32])
{
    return txt && strlen(txt) == 40 && zmq_z85_decode(out, txt) != NULL;
}

zcert_t *wire_cert_load(const char *path, pf_error_t *err)
{
    char *text = NULL;
    size_t len = 0;
    if (file_read(path, "the certificate", WIRE_CERT_MAX_BYTES, &text, &len, err) != PF_OK)
        return NULL;
    /* A file that never says public-key is none, and is refused before
     * zconfig parses it: zconfig logs a line of its own, naming no file, for
     * text that is not ZPL (a README beside the broker's keys). A NUL would
     * end the text zconfig reads early: such a file is binary. */
    bool binary = memchr(text, '\0', len) != NULL;
    if (!binary && !strstr(text, "public-key")) {
        free(text);
        pf_error_set(err, PF_EBADINPUT, "%s: not a certificate: no curve/public-key " KEYGEN_HINT, path);
        return NULL;
    }
    zconfig_t *root = binary ? NULL : zconfig_str_load(text);
    free(text);
    if (!root) {
        pf_error_set(err, PF_EBADINPUT, "%s: not a certificate: not ZPL " KEYGEN_HINT, path);
        return NULL;
    }
    uint8_t public_key[32], secret_key[32] = {0};
    const char *public_txt = zconfig_get(root, "curve/public-key", NULL);
    const char *secret_txt = zconfig_get(root, "curve/secret-key", NULL);
    zcert_t *cert = NULL;
    if (!public_txt)
        pf_error_set(err, PF_EBADINPUT, "%s: not a certificate: no curve/public-key " KEYGEN_HINT, path);
    else if (!s_key(public_txt, public_key))
        pf_error_set(err, PF_EBADINPUT, "%s: curve/public-key is not 40 Z85 characters", path);
    else if (secret_txt && !s_key(secret_txt, secret_key))
        pf_error_set(err, PF_EBADINPUT, "%s: curve/secret-key is not 40 Z85 characters", path);
    else if (!(cert = zcert_new_from(public_key, secret_key)))
        pf_error_set(err, PF_ENOMEM, "%s: out of memory", path);
    zconfig_t *meta = cert ? zconfig_locate(root, "metadata") : NULL;
    for (zconfig_t *item = meta ? zconfig_child(meta) : NULL; item; item = zconfig_next(item)) {
        const char *value = zconfig_value(item);
        if (zconfig_name(item) && value)
            zcert_set_meta(cert, zconfig_name(item), "%s", value);
    }
    zconfig_destroy(&root);
    return cert;
}
