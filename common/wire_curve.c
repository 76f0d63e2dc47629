#include "wire_curve.h"

#include <assert.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pf_log.h"
#include "wire_cert.h"

struct wire_curve_t {
    zcert_t *own;                  /* public + secret */
    char broker_public[41];        /* clients: the server's key, Z85 */
};

/* Loads a certificate file; a secret file must hold a secret key. */
static zcert_t *s_load(const char *path, bool need_secret, pf_error_t *err)
{
    if (!path || !*path) {
        pf_error_set(err, PF_EBADINPUT, "no certificate file given");
        return NULL;
    }
    zcert_t *cert = wire_cert_load(path, err);
    if (!cert)
        return NULL;
    static const uint8_t zero[32];
    if (need_secret && memcmp(zcert_secret_key(cert), zero, sizeof zero) == 0) {
        pf_error_set(err, PF_EBADINPUT, "%s: holds no secret key (give the NAME.key_secret file)", path);
        zcert_destroy(&cert);
        return NULL;
    }
    return cert;
}

/* A wire_curve_t holding this process's certificate (the secret file). */
static wire_curve_t *s_new(const char *secret_path, pf_error_t *err)
{
    if (!zsys_has_curve()) {
        pf_error_set(err, PF_EBADINPUT, "this libzmq was built without CURVE support");
        return NULL;
    }
    zcert_t *own = s_load(secret_path, true, err);
    if (!own)
        return NULL;
    wire_curve_t *self = calloc(1, sizeof *self);
    if (!self) {
        zcert_destroy(&own);
        pf_error_set(err, PF_ENOMEM, "out of memory");
        return NULL;
    }
    self->own = own;
    return self;
}

wire_curve_t *wire_curve_client_new(const char *secret_path, const char *broker_key_path, pf_error_t *err)
{
    wire_curve_t *self = s_new(secret_path, err);
    if (!self)
        return NULL;
    zcert_t *broker = s_load(broker_key_path, false, err);
    if (!broker) {
        pf_error_prefix(err, "the broker's public key");
        wire_curve_destroy(&self);
        return NULL;
    }
    snprintf(self->broker_public, sizeof self->broker_public, "%s", zcert_public_txt(broker));
    zcert_destroy(&broker);
    return self;
}

wire_curve_t *wire_curve_server_new(const char *secret_path, pf_error_t *err)
{
    return s_new(secret_path, err);
}

void wire_curve_destroy(wire_curve_t **self_p)
{
    assert(self_p);
    wire_curve_t *self = *self_p;
    if (!self)
        return;
    zcert_destroy(&self->own);
    free(self);
    *self_p = NULL;
}

void wire_curve_apply_client(const wire_curve_t *self, zsock_t *sock)
{
    assert(self && sock);
    zcert_apply(self->own, sock);
    zsock_set_curve_serverkey(sock, self->broker_public);
}

void wire_curve_apply_server(const wire_curve_t *self, zsock_t *sock, const char *domain)
{
    assert(self && sock && domain);
    zcert_apply(self->own, sock);
    zsock_set_curve_server(sock, 1);
    zsock_set_zap_domain(sock, domain);
}

const char *wire_curve_public_txt(const wire_curve_t *self)
{
    return zcert_public_txt(self->own);
}

bool wire_endpoint_is_local(const char *endpoint)
{
    if (!endpoint)
        return false;
    if (strncmp(endpoint, "ipc://", 6) == 0 || strncmp(endpoint, "inproc://", 9) == 0)
        return true;
    if (strncmp(endpoint, "tcp://", 6) != 0)
        return false;
    const char *host = endpoint + 6;
    /* A connect endpoint may name a source: tcp://src;dest. */
    const char *semi = strchr(host, ';');
    if (semi)
        host = semi + 1;
    if (strncmp(host, "localhost:", 10) == 0 || strncmp(host, "[::1]:", 6) == 0 || strncmp(host, "lo:", 3) == 0)
        return true;
    /* 127.0.0.0/8 as an address, digits and dots up to the port: a host name
     * that only starts so ("127.example.com") resolves wherever its DNS says. */
    if (strncmp(host, "127.", 4) != 0)
        return false;
    size_t n = strspn(host, "0123456789.");
    return host[n] == ':';
}

pf_status_t wire_curve_check_plaintext(const char *endpoint, bool insecure, const char *component,
                                       pf_error_t *err)
{
    if (wire_endpoint_is_local(endpoint))
        return PF_OK;
    if (insecure) {
        pf_log_warn(component, "%s: PLAINTEXT and unauthenticated (--insecure): anyone who can reach it can read "
                               "and send farm traffic; use --curve-secret (docs/security.md)",
                    endpoint);
        return PF_OK;
    }
    return pf_error_set(err, PF_EBADINPUT,
                        "%s leaves this machine, and no --curve-secret is set: give this process its certificate "
                        "(profeed keygen; docs/security.md) or say --insecure to speak plaintext anyway",
                        endpoint);
}

void wire_curve_client_read(const config_t *settings, wire_curve_client_t *out)
{
    out->secret = config_str(settings, "curve-secret");
    out->broker_key = config_str(settings, "broker-key");
    out->insecure = config_bool(settings, "insecure");
}

pf_status_t wire_curve_client_setup(const wire_curve_client_t *settings, const char *endpoint, const char *component,
                                    wire_curve_t **curve_p, pf_error_t *err)
{
    *curve_p = NULL;
    const char *secret = settings->secret, *broker_key = settings->broker_key;
    if (!secret || !*secret) {
        if (broker_key && *broker_key)
            return pf_error_set(err, PF_EBADINPUT, "--broker-key needs --curve-secret (this process's certificate)");
        return wire_curve_check_plaintext(endpoint, settings->insecure, component, err);
    }
    if (!broker_key || !*broker_key)
        return pf_error_set(err, PF_EBADINPUT, "--curve-secret needs --broker-key (the broker's public NAME.key)");
    *curve_p = wire_curve_client_new(secret, broker_key, err);
    if (!*curve_p)
        return err ? err->code : PF_EBADINPUT;
    pf_log_info(component, "CURVE to %s as key %s", endpoint, wire_curve_public_txt(*curve_p));
    return PF_OK;
}

pf_status_t wire_curve_keygen(const char *dir, const char *name, pf_error_t *err)
{
    if (!name || !*name || strchr(name, '/') || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
        return pf_error_set(err, PF_EBADINPUT, "a key name is a plain file name, not \"%s\"", name ? name : "");
    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        return pf_error_set(err, PF_EIO, "cannot create %s: %s", dir, strerror(errno));
    char public_path[4096], secret_path[4096 + 8];
    snprintf(public_path, sizeof public_path, "%s/%s.key", dir, name);
    snprintf(secret_path, sizeof secret_path, "%s_secret", public_path); /* zcert_save's name for it */
    /* zcert_save has no O_EXCL: this guards a user's slip (keygen twice), not a race. */
    if (access(public_path, F_OK) == 0 || access(secret_path, F_OK) == 0) /* banned-ok: see above */
        return pf_error_set(err, PF_EBADINPUT, "%s already has a key named %s; not overwritten", dir, name);
    zcert_t *cert = zcert_new();
    if (!cert)
        return pf_error_set(err, PF_ENOMEM, "cannot make a key pair");
    zcert_set_meta(cert, "name", "%s", name);
    zcert_set_meta(cert, "made-by", "profeed keygen");
    /* zcert_save writes NAME.key and NAME.key_secret; the secret one private. */
    mode_t old = umask(077);
    int rc = zcert_save(cert, public_path);
    umask(old);
    zcert_destroy(&cert);
    if (rc != 0)
        return pf_error_set(err, PF_EIO, "cannot write %s: %s", public_path, strerror(errno));
    chmod(public_path, 0644);
    return PF_OK;
}
