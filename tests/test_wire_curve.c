/* wire_curve: certificates, which endpoints may speak plaintext, and CURVE
 * on a real socket pair (common/wire_curve.h). */
#include "wire_curve.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wire_cert.h"

/* A scratch folder of this test's own; s_rmdir() removes it (one level). */
static void s_mkdtemp(char *dir, size_t cap)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, cap, "%s/profeed-curve-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    cr_assert_not_null(mkdtemp(dir));
}

static void s_rmdir(const char *dir)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    for (struct dirent *e; (e = readdir(d));) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        /* libzmq may unlink an ipc socket's file itself after its close. */
        cr_expect(unlink(path) == 0 || errno == ENOENT, "%s", path);
    }
    closedir(d);
    cr_expect_eq(rmdir(dir), 0, "%s", dir);
}

static void s_path(char *out, size_t cap, const char *dir, const char *file)
{
    snprintf(out, cap, "%s/%s", dir, file);
}

Test(wire_curve, keygen_writes_a_public_and_a_private_file_and_never_overwrites)
{
    char dir[4096], pub[4200], sec[4200];
    s_mkdtemp(dir, sizeof dir);
    pf_error_t err;
    cr_assert_eq(wire_curve_keygen(dir, "broker", &err), PF_OK, "%s", err.msg);
    s_path(pub, sizeof pub, dir, "broker.key");
    s_path(sec, sizeof sec, dir, "broker.key_secret");
    struct stat st;
    cr_assert_eq(stat(pub, &st), 0);
    cr_expect_eq(st.st_mode & 0777, 0644, "the public key is shareable");
    cr_assert_eq(stat(sec, &st), 0);
    cr_expect_eq(st.st_mode & 0777, 0600, "the secret key is its owner's only");
    cr_assert_eq(wire_curve_keygen(dir, "broker", &err), PF_EBADINPUT, "a second keygen of the same name");
    cr_expect(strstr(err.msg, "already has a key named broker"), "%s", err.msg);
    /* The public key the secret file gives is the one in the public file. */
    wire_curve_t *server = wire_curve_server_new(sec, &err);
    cr_assert_not_null(server, "%s", err.msg);
    zcert_t *cert = zcert_load(pub);
    cr_assert_not_null(cert);
    cr_expect_eq(strlen(wire_curve_public_txt(server)), 40, "Z85 of 32 bytes");
    cr_expect_str_eq(wire_curve_public_txt(server), zcert_public_txt(cert));
    zcert_destroy(&cert);
    wire_curve_destroy(&server);
    wire_curve_destroy(&server); /* NULL: a no-op */
    s_rmdir(dir);
}

Test(wire_curve, keygen_refuses_a_name_that_is_not_a_plain_file_name)
{
    char dir[4096];
    s_mkdtemp(dir, sizeof dir);
    const char *bad[] = {"", ".", "..", "../escape", "a/b"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        pf_error_t err;
        cr_expect_eq(wire_curve_keygen(dir, bad[i], &err), PF_EBADINPUT, "\"%s\"", bad[i]);
        cr_expect(strstr(err.msg, "a key name is a plain file name"), "%s", err.msg);
    }
    pf_error_t err;
    cr_expect_eq(wire_curve_keygen(dir, NULL, &err), PF_EBADINPUT);
    DIR *d = opendir(dir);
    size_t entries = 0;
    while (readdir(d))
        entries++;
    closedir(d);
    cr_expect_eq(entries, 2, "nothing written but . and ..");
    s_rmdir(dir);
}

Test(wire_curve, a_certificate_that_is_missing_public_or_not_one_is_refused_naming_the_file)
{
    char dir[4096], pub[4200], sec[4200], junk[4200];
    s_mkdtemp(dir, sizeof dir);
    pf_error_t err;
    cr_assert_eq(wire_curve_keygen(dir, "c1", &err), PF_OK, "%s", err.msg);
    s_path(pub, sizeof pub, dir, "c1.key");
    s_path(sec, sizeof sec, dir, "c1.key_secret");
    s_path(junk, sizeof junk, dir, "junk.key");

    /* The public file alone, its secret beside it notwithstanding (CZMQ's
     * zcert_load would have read NAME.key_secret instead). */
    cr_expect_null(wire_curve_server_new(pub, &err), "a public file has no secret key");
    cr_expect_eq(err.code, PF_EBADINPUT);
    cr_expect(strstr(err.msg, "holds no secret key") && strstr(err.msg, pub), "%s", err.msg);

    char missing[4200];
    s_path(missing, sizeof missing, dir, "absent.key_secret");
    cr_expect_null(wire_curve_server_new(missing, &err));
    cr_expect_eq(err.code, PF_ENOTFOUND);
    cr_expect(strstr(err.msg, missing) && strstr(err.msg, "cannot read the certificate"), "%s", err.msg);

    /* Each refused naming the file, and (under ASan) without a leak: CZMQ's
     * zcert_load leaked its zfile on a file that is not ZPL. */
    static const struct {
        const char *text;
        size_t len;
        const char *says;
    } bad[] = {
        {"metadata\n    name = \"not a key\"\n", 0, "no curve/public-key"},
        {"this is { not ZPL\n  = = =\n", 0, "no curve/public-key"},
        {"public-key { not ZPL\n  = = =\n", 0, "not ZPL"},
        {"curve\n    public-key = \"0123\"\n    secret-key = \"0123\"\n", 0, "public-key is not 40 Z85"},
        {"curve\n    public-key = \"pbSb>8G.3*f>I-aqBb??4UFqRO1@i0[<yfD(DrAv\"\n    secret-key = \"~~\"\n", 0,
         "secret-key is not 40 Z85"},
        {"curve\n\0    public-key = \"pbSb>8G.3*f>I-aqBb??4UFqRO1@i0[<yfD(DrAv\"\n", 60, "not ZPL"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        FILE *f = fopen(junk, "wb");
        cr_assert_not_null(f);
        fwrite(bad[i].text, 1, bad[i].len ? bad[i].len : strlen(bad[i].text), f);
        fclose(f);
        cr_expect_null(wire_curve_server_new(junk, &err), "case %zu", i);
        cr_expect_eq(err.code, PF_EBADINPUT, "case %zu", i);
        cr_expect(strstr(err.msg, bad[i].says) && strstr(err.msg, junk), "case %zu: %s", i, err.msg);
    }
    FILE *f = fopen(junk, "wb"); /* a valid start, then more than a certificate may hold */
    cr_assert_not_null(f);
    fputs("curve\n    public-key = \"pbSb>8G.3*f>I-aqBb??4UFqRO1@i0[<yfD(DrAv\"\n#", f);
    for (size_t i = 0; i < WIRE_CERT_MAX_BYTES; i++)
        fputc('x', f);
    fclose(f);
    cr_expect_null(wire_curve_server_new(junk, &err));
    cr_expect_eq(err.code, PF_ETOOBIG, "%s", err.msg);

    cr_expect_null(wire_curve_server_new("", &err));
    cr_expect(strstr(err.msg, "no certificate file given"), "%s", err.msg);

    cr_expect_null(wire_curve_client_new(sec, missing, &err), "a client needs the broker's key");
    cr_expect(strstr(err.msg, "the broker's public key") && strstr(err.msg, missing), "%s", err.msg);
    s_rmdir(dir);
}

Test(wire_curve, only_endpoints_on_this_machine_count_as_local)
{
    const char *local[] = {"tcp://127.0.0.1:5555", "tcp://127.1.2.3:1", "tcp://localhost:5555",
                           "tcp://[::1]:5555",     "ipc:///tmp/profeed.sock", "inproc://broker",
                           "tcp://10.0.0.1:0;127.0.0.1:5555"};
    for (size_t i = 0; i < sizeof local / sizeof local[0]; i++)
        cr_expect(wire_endpoint_is_local(local[i]), "%s", local[i]);
    const char *remote[] = {
        "tcp://10.0.0.5:5555",
        "tcp://example.com:5555",
        "tcp://localhost.example.com:5555",
        "tcp://127.0.0.1;10.0.0.5:5555", /* the source is local, the destination is not */
        "udp://127.0.0.1:5555",
        "tcp://0.0.0.0:5555",
        "",
        /* A host name that merely starts like a loopback address resolves
         * wherever its DNS says. */
        "tcp://127.example.com:5555",
        "tcp://127.0.0.1.example.com:5555",
    };
    for (size_t i = 0; i < sizeof remote / sizeof remote[0]; i++)
        cr_expect_not(wire_endpoint_is_local(remote[i]), "%s", remote[i]);
    cr_expect_not(wire_endpoint_is_local(NULL));
}

Test(wire_curve, plaintext_off_this_machine_needs_insecure)
{
    pf_error_t err;
    cr_expect_eq(wire_curve_check_plaintext("tcp://127.0.0.1:5555", false, "test", &err), PF_OK);
    cr_expect_eq(wire_curve_check_plaintext("tcp://10.0.0.5:5555", false, "test", &err), PF_EBADINPUT);
    cr_expect(strstr(err.msg, "tcp://10.0.0.5:5555") && strstr(err.msg, "--insecure") &&
                  strstr(err.msg, "--curve-secret"),
              "%s", err.msg);
    cr_expect_eq(wire_curve_check_plaintext("tcp://10.0.0.5:5555", true, "test", &err), PF_OK, "said --insecure");
}

Test(wire_curve, client_setup_wants_both_keys_or_neither)
{
    char dir[4096], pub[4200], sec[4200];
    s_mkdtemp(dir, sizeof dir);
    pf_error_t err;
    cr_assert_eq(wire_curve_keygen(dir, "a1", &err), PF_OK, "%s", err.msg);
    s_path(pub, sizeof pub, dir, "a1.key");
    s_path(sec, sizeof sec, dir, "a1.key_secret");
    wire_curve_t *curve = (wire_curve_t *) &err; /* not NULL: setup must clear it */

    wire_curve_client_t only_secret = {.secret = sec};
    cr_expect_eq(wire_curve_client_setup(&only_secret, "tcp://10.0.0.5:1", "test", &curve, &err), PF_EBADINPUT);
    cr_expect_null(curve);
    cr_expect(strstr(err.msg, "--curve-secret needs --broker-key"), "%s", err.msg);

    wire_curve_client_t only_key = {.broker_key = pub};
    cr_expect_eq(wire_curve_client_setup(&only_key, "tcp://127.0.0.1:1", "test", &curve, &err), PF_EBADINPUT);
    cr_expect(strstr(err.msg, "--broker-key needs --curve-secret"), "%s", err.msg);

    wire_curve_client_t none = {0};
    cr_expect_eq(wire_curve_client_setup(&none, "tcp://127.0.0.1:1", "test", &curve, &err), PF_OK);
    cr_expect_null(curve, "plaintext on loopback");
    cr_expect_eq(wire_curve_client_setup(&none, "tcp://10.0.0.5:1", "test", &curve, &err), PF_EBADINPUT);

    wire_curve_client_t both = {.secret = sec, .broker_key = pub};
    cr_assert_eq(wire_curve_client_setup(&both, "tcp://10.0.0.5:1", "test", &curve, &err), PF_OK, "%s", err.msg);
    cr_assert_not_null(curve);
    wire_curve_destroy(&curve);
    s_rmdir(dir);
}

/* Sends "ping" from `client` and waits up to `ms` for it at `server`. */
static bool s_delivered(zsock_t *client, zsock_t *server, int ms)
{
    zstr_sendx(client, "ping", NULL);
    zpoller_t *poller = zpoller_new(server, NULL);
    bool got = false;
    if (zpoller_wait(poller, ms) == server) {
        char *s = zstr_recv(server);
        got = s && strcmp(s, "ping") == 0;
        zstr_free(&s);
    }
    zpoller_destroy(&poller);
    return got;
}

/* The applied keys make a working CURVE pair, and a client that has the
 * wrong server key gets nothing through. (No ZAP handler here: which client
 * keys the broker admits is test_broker_auth's.) */
Test(wire_curve, applied_keys_carry_a_message_and_a_wrong_server_key_carries_none)
{
    char dir[4096], sec_b[4200], pub_b[4200], sec_c[4200], sec_x[4200], pub_x[4200];
    s_mkdtemp(dir, sizeof dir);
    pf_error_t err;
    cr_assert_eq(wire_curve_keygen(dir, "broker", &err), PF_OK, "%s", err.msg);
    cr_assert_eq(wire_curve_keygen(dir, "client", &err), PF_OK, "%s", err.msg);
    cr_assert_eq(wire_curve_keygen(dir, "other", &err), PF_OK, "%s", err.msg);
    s_path(sec_b, sizeof sec_b, dir, "broker.key_secret");
    s_path(pub_b, sizeof pub_b, dir, "broker.key");
    s_path(sec_c, sizeof sec_c, dir, "client.key_secret");
    s_path(sec_x, sizeof sec_x, dir, "other.key_secret");
    s_path(pub_x, sizeof pub_x, dir, "other.key");
    wire_curve_t *server_keys = wire_curve_server_new(sec_b, &err);
    wire_curve_t *good_keys = wire_curve_client_new(sec_c, pub_b, &err);
    wire_curve_t *wrong_keys = wire_curve_client_new(sec_c, pub_x, &err);
    cr_assert(server_keys && good_keys && wrong_keys, "%s", err.msg);

    char endpoint[4200];
    snprintf(endpoint, sizeof endpoint, "ipc://%s/sock", dir);
    zsock_t *server = zsock_new(ZMQ_PULL);
    wire_curve_apply_server(server_keys, server, "workers");
    zsock_set_linger(server, 0);
    cr_assert_eq(zsock_bind(server, "%s", endpoint), 0);

    zsock_t *good = zsock_new(ZMQ_PUSH);
    wire_curve_apply_client(good_keys, good);
    zsock_set_linger(good, 0);
    cr_assert_eq(zsock_connect(good, "%s", endpoint), 0);
    cr_expect(s_delivered(good, server, 5000), "the right server key: delivered");

    zsock_t *wrong = zsock_new(ZMQ_PUSH);
    wire_curve_apply_client(wrong_keys, wrong);
    zsock_set_linger(wrong, 0);
    cr_assert_eq(zsock_connect(wrong, "%s", endpoint), 0);
    cr_expect_not(s_delivered(wrong, server, 500), "the handshake fails: nothing arrives");

    zsock_destroy(&wrong);
    zsock_destroy(&good);
    zsock_destroy(&server);
    wire_curve_destroy(&wrong_keys);
    wire_curve_destroy(&good_keys);
    wire_curve_destroy(&server_keys);
    s_rmdir(dir);
}
