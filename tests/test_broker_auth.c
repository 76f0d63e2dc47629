/* broker_auth: the broker's ZAP handler (broker/broker_auth.h), asked
 * directly on its ZAP endpoint the way libzmq asks it during a CURVE
 * handshake (ZeroMQ RFC 27), with keys made by wire_curve_keygen(). */
#include "broker_auth.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_util.h"
#include "wire_curve.h"

#define ZAP_ENDPOINT "inproc://zeromq.zap.01"

/* A scratch tree: <root>/keys (every certificate), and one folder per role
 * holding the public files of that role's keys, as an operator lays it out. */
typedef struct {
    char root[4096];
    char keys[4200], agents[4200], collectors[4200], analyzers[4200], operators[4200];
} tree_t;

static void s_copy(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    cr_assert(in && out, "%s -> %s", from, to);
    char buf[4096];
    for (size_t n; (n = fread(buf, 1, sizeof buf, in)) > 0;)
        cr_assert_eq(fwrite(buf, 1, n, out), n);
    fclose(in);
    fclose(out);
}

/* Makes key `name` and puts its public file into `role_dir` (NULL: none). */
static void s_key(const tree_t *t, const char *name, const char *role_dir)
{
    pf_error_t err;
    cr_assert_eq(wire_curve_keygen(t->keys, name, &err), PF_OK, "%s", err.msg);
    if (!role_dir)
        return;
    char from[4400], to[4400];
    snprintf(from, sizeof from, "%s/%s.key", t->keys, name);
    snprintf(to, sizeof to, "%s/%s.key", role_dir, name);
    s_copy(from, to);
}

static void s_tree(tree_t *t)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(t->root, sizeof t->root, "%s/profeed-auth-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    cr_assert_not_null(mkdtemp(t->root));
    snprintf(t->keys, sizeof t->keys, "%s/keys", t->root);
    snprintf(t->agents, sizeof t->agents, "%s/agents", t->root);
    snprintf(t->collectors, sizeof t->collectors, "%s/collectors", t->root);
    snprintf(t->analyzers, sizeof t->analyzers, "%s/analyzers", t->root);
    snprintf(t->operators, sizeof t->operators, "%s/operators", t->root);
    cr_assert_eq(mkdir(t->agents, 0700), 0);
    cr_assert_eq(mkdir(t->collectors, 0700), 0);
    cr_assert_eq(mkdir(t->analyzers, 0700), 0);
    cr_assert_eq(mkdir(t->operators, 0700), 0);
    s_key(t, "a1", t->agents);
    s_key(t, "c1", t->collectors);
    s_key(t, "n1", t->analyzers);
    s_key(t, "op", t->operators);
    s_key(t, "stranger", NULL);
}


/* The 32 bytes of key `name`'s public key. */
static void s_public(const tree_t *t, const char *name, uint8_t out[32])
{
    char path[4400];
    snprintf(path, sizeof path, "%s/%s.key", t->keys, name);
    zcert_t *cert = zcert_load(path);
    cr_assert_not_null(cert, "%s", path);
    memcpy(out, zcert_public_key(cert), 32);
    zcert_destroy(&cert);
}

typedef struct {
    char status[8];
    char text[128];
    char user[256];
    char request_id[32];
    char meta_key[64]; /* the one metadata property's value, "" when none */
} reply_t;

static void s_pop(zmsg_t *msg, char *out, size_t cap)
{
    char *s = zmsg_popstr(msg);
    cr_assert_not_null(s);
    snprintf(out, cap, "%s", s);
    zstr_free(&s);
}

/* Sends one ZAP request made of `frames` (a NULL entry is an empty frame;
 * `key`, when `key_len` > 0, is appended as the credentials frame), lets the
 * handler answer it, and reads the reply. */
static void s_ask(broker_auth_t *auth, const char *const *frames, size_t n, const uint8_t *key, size_t key_len,
                  reply_t *out)
{
    zsock_t *req = zsock_new_req(ZAP_ENDPOINT);
    cr_assert_not_null(req);
    zsock_set_rcvtimeo(req, 2000);
    zmsg_t *msg = zmsg_new();
    for (size_t i = 0; i < n; i++)
        zmsg_addstr(msg, frames[i] ? frames[i] : "");
    if (key_len)
        zmsg_addmem(msg, key, key_len);
    cr_assert_eq(zmsg_send(&msg, req), 0);
    zpoller_t *poller = zpoller_new(broker_auth_socket(auth), NULL);
    cr_assert_eq(zpoller_wait(poller, 2000), broker_auth_socket(auth), "the handler got the request");
    zpoller_destroy(&poller);
    broker_auth_handle(auth);
    zmsg_t *reply = zmsg_recv(req);
    cr_assert_not_null(reply, "the handler answers every request");
    cr_assert_eq(zmsg_size(reply), 6, "RFC 27: version, id, status, text, user, metadata");
    memset(out, 0, sizeof *out);
    char *version = zmsg_popstr(reply);
    cr_expect_str_eq(version, "1.0");
    zstr_free(&version);
    s_pop(reply, out->request_id, sizeof out->request_id);
    s_pop(reply, out->status, sizeof out->status);
    s_pop(reply, out->text, sizeof out->text);
    s_pop(reply, out->user, sizeof out->user);
    zframe_t *meta = zmsg_pop(reply);
    /* ZMTP properties: name length, name, 4-byte big-endian value length, value. */
    const uint8_t *m = zframe_data(meta);
    size_t len = zframe_size(meta);
    if (len > 0) {
        size_t name_len = m[0];
        cr_assert_geq(len, 1 + name_len + 4);
        cr_expect_eq(memcmp(m + 1, BROKER_AUTH_KEY, name_len), 0);
        size_t value_len = (size_t) m[1 + name_len] << 24 | (size_t) m[2 + name_len] << 16 |
                           (size_t) m[3 + name_len] << 8 | m[4 + name_len];
        cr_assert_eq(len, 1 + name_len + 4 + value_len, "one property, exactly");
        cr_assert_lt(value_len, sizeof out->meta_key);
        memcpy(out->meta_key, m + 5 + name_len, value_len);
    }
    zframe_destroy(&meta);
    zmsg_destroy(&reply);
    zsock_destroy(&req);
}

/* A CURVE request for `key` on `domain`. */
static void s_curve(broker_auth_t *auth, const char *domain, const uint8_t key[32], reply_t *out)
{
    const char *frames[] = {"1.0", "req-7", domain, "127.0.0.1", NULL, "CURVE"};
    s_ask(auth, frames, 6, key, 32, out);
}

static broker_auth_t *s_auth(const tree_t *t)
{
    pf_error_t err;
    broker_auth_t *auth = broker_auth_new(t->agents, t->collectors, t->analyzers, t->operators, &err);
    cr_assert_not_null(auth, "%s", err.msg);
    return auth;
}

Test(broker_auth, each_role_s_key_is_admitted_on_its_endpoint_as_that_role)
{
    tree_t t;
    s_tree(&t);
    broker_auth_t *auth = s_auth(&t);
    struct {
        const char *key, *domain, *user;
    } cases[] = {
        {"a1", BROKER_AUTH_AGENTS, "agent:a1"},
        {"op", BROKER_AUTH_AGENTS, "operator:op"},
        {"c1", BROKER_AUTH_WORKERS, "collector:c1"},
        {"n1", BROKER_AUTH_WORKERS, "analyzer:n1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t key[32];
        s_public(&t, cases[i].key, key);
        reply_t r;
        s_curve(auth, cases[i].domain, key, &r);
        cr_expect_str_eq(r.status, "200", "%s", cases[i].key);
        cr_expect_str_eq(r.request_id, "req-7", "the request id comes back");
        cr_expect_str_eq(r.user, cases[i].user);
        char z85[41];
        zmq_z85_encode(z85, key, 32);
        cr_expect_str_eq(r.meta_key, z85, "the connection's key, for a job's owner");
    }
    broker_auth_destroy(&auth);
    broker_auth_destroy(&auth);
    test_rm_tree(t.root);
}

Test(broker_auth, a_key_is_refused_on_the_other_endpoint_and_an_unknown_key_everywhere)
{
    tree_t t;
    s_tree(&t);
    broker_auth_t *auth = s_auth(&t);
    struct {
        const char *key, *domain, *why;
    } cases[] = {
        {"c1", BROKER_AUTH_AGENTS, "not an agent key"},
        {"n1", BROKER_AUTH_AGENTS, "not an agent key"},
        {"a1", BROKER_AUTH_WORKERS, "not a collector or analyzer key"},
        {"op", BROKER_AUTH_WORKERS, "not a collector or analyzer key"},
        {"stranger", BROKER_AUTH_AGENTS, "not an agent key"},
        {"stranger", BROKER_AUTH_WORKERS, "not a collector or analyzer key"},
        {"a1", "some-other-domain", "not a collector or analyzer key"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t key[32];
        s_public(&t, cases[i].key, key);
        reply_t r;
        s_curve(auth, cases[i].domain, key, &r);
        cr_expect_str_eq(r.status, "400", "%s on %s", cases[i].key, cases[i].domain);
        cr_expect_str_eq(r.text, cases[i].why, "%s on %s", cases[i].key, cases[i].domain);
        cr_expect_str_eq(r.user, "", "no User-Id for a refused key");
        cr_expect_str_eq(r.meta_key, "", "and no key property");
    }
    broker_auth_destroy(&auth);
    test_rm_tree(t.root);
}

/* What libzmq would never send, or a peer without CURVE: refused with a
 * reason, and answered all the same (a REQ peer waits for its reply). */
Test(broker_auth, malformed_requests_and_other_mechanisms_are_refused_with_a_reason)
{
    tree_t t;
    s_tree(&t);
    broker_auth_t *auth = s_auth(&t);
    uint8_t key[32];
    s_public(&t, "a1", key);
    reply_t r;

    const char *plain[] = {"1.0", "r1", BROKER_AUTH_AGENTS, "127.0.0.1", NULL, "PLAIN", "user", "password"};
    s_ask(auth, plain, 8, NULL, 0, &r);
    cr_expect_str_eq(r.status, "400");
    cr_expect_str_eq(r.text, "the broker accepts CURVE connections only");

    const char *null_mech[] = {"1.0", "r2", BROKER_AUTH_AGENTS, "127.0.0.1", NULL, "NULL"};
    s_ask(auth, null_mech, 6, NULL, 0, &r);
    cr_expect_str_eq(r.text, "the broker accepts CURVE connections only");

    const char *curve[] = {"1.0", "r3", BROKER_AUTH_AGENTS, "127.0.0.1", NULL, "CURVE"};
    s_ask(auth, curve, 6, key, 31, &r);
    cr_expect_str_eq(r.status, "400");
    cr_expect_str_eq(r.text, "no CURVE public key", "31 bytes are no key");
    s_ask(auth, curve, 6, NULL, 0, &r);
    cr_expect_str_eq(r.text, "no CURVE public key", "no credentials frame");

    const char *version[] = {"2.0", "r4", BROKER_AUTH_AGENTS, "127.0.0.1", NULL, "CURVE"};
    s_ask(auth, version, 6, key, 32, &r);
    cr_expect_str_eq(r.status, "400", "a ZAP version this handler does not speak");
    cr_expect_str_eq(r.text, "malformed ZAP request");
    cr_expect_str_eq(r.request_id, "r4");

    const char *short_request[] = {"1.0", "r5"};
    s_ask(auth, short_request, 2, NULL, 0, &r);
    cr_expect_str_eq(r.status, "400", "no domain, no mechanism");
    cr_expect_str_eq(r.text, "malformed ZAP request");
    cr_expect_str_eq(r.request_id, "r5");

    /* The handler still serves after all of that. */
    s_curve(auth, BROKER_AUTH_AGENTS, key, &r);
    cr_expect_str_eq(r.status, "200");
    broker_auth_destroy(&auth);
    test_rm_tree(t.root);
}

Test(broker_auth, a_bad_folder_is_refused_at_start_and_a_role_without_one_admits_nobody)
{
    tree_t t;
    s_tree(&t);
    pf_error_t err;
    char missing[4400], file[4400];
    snprintf(missing, sizeof missing, "%s/absent", t.root);
    cr_expect_null(broker_auth_new(t.agents, missing, t.analyzers, NULL, &err));
    cr_expect(strstr(err.msg, "collector keys folder") && strstr(err.msg, missing), "%s", err.msg);
    cr_expect(strstr(err.msg, "No such file or directory"), "%s", err.msg);
    snprintf(file, sizeof file, "%s/a1.key", t.agents);
    errno = ENOENT; /* a stale errno must not be the reason for a file that exists */
    cr_expect_null(broker_auth_new(t.agents, t.collectors, t.analyzers, file, &err), "a file is no folder");
    cr_expect(strstr(err.msg, "operator keys folder") && strstr(err.msg, file), "%s", err.msg);
    cr_expect(strstr(err.msg, "not a folder") && !strstr(err.msg, "No such file"), "%s", err.msg);

    /* Neither left the ZAP endpoint bound: this one binds it. */
    broker_auth_t *auth = broker_auth_new(t.agents, NULL, "", NULL, &err);
    cr_assert_not_null(auth, "%s", err.msg);
    uint8_t c1[32], a1[32], op[32];
    s_public(&t, "c1", c1);
    s_public(&t, "a1", a1);
    s_public(&t, "op", op);
    reply_t r;
    s_curve(auth, BROKER_AUTH_WORKERS, c1, &r);
    cr_expect_str_eq(r.status, "400", "no collectors' folder: no collector");
    s_curve(auth, BROKER_AUTH_AGENTS, op, &r);
    cr_expect_str_eq(r.status, "400", "no operators' folder: an operator's key is a stranger's");
    s_curve(auth, BROKER_AUTH_AGENTS, a1, &r);
    cr_expect_str_eq(r.status, "200");
    broker_auth_destroy(&auth);
    test_rm_tree(t.root);
}

static void s_write(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    fclose(f);
}

/* The status a CURVE request for key `name` on `domain` gets. */
static void s_status(broker_auth_t *auth, const tree_t *t, const char *name, const char *domain, char out[8])
{
    uint8_t key[32];
    s_public(t, name, key);
    reply_t r;
    s_curve(auth, domain, key, &r);
    snprintf(out, 8, "%s", r.status);
}

/* An operator's folder as it lives: keys added, replaced and removed while
 * the broker runs, and files that are not keys beside them. */
Test(broker_auth, a_folder_is_read_again_when_it_changes_and_stray_files_cost_no_key)
{
    tree_t t;
    s_tree(&t);
    char path[4400], sub[4400];
    snprintf(path, sizeof path, "%s/README", t.agents);
    s_write(path, "the agents' public keys live here\n");
    snprintf(path, sizeof path, "%s/broken.key", t.agents);
    s_write(path, "curve\n    public-key = \"too short\"\n");
    snprintf(path, sizeof path, "%s/.a1.key.swp", t.agents);
    s_write(path, "\x01\x02 an editor's swap file");
    snprintf(sub, sizeof sub, "%s/old", t.agents);
    cr_assert_eq(mkdir(sub, 0700), 0);
    broker_auth_t *auth = s_auth(&t);
    char status[8];
    s_status(auth, &t, "a1", BROKER_AUTH_AGENTS, status);
    cr_expect_str_eq(status, "200", "the key beside files that are not keys");

    /* Added: admitted at the next handshake, no restart. */
    s_status(auth, &t, "stranger", BROKER_AUTH_AGENTS, status);
    cr_expect_str_eq(status, "400");
    s_key(&t, "late", t.agents);
    s_status(auth, &t, "late", BROKER_AUTH_AGENTS, status);
    cr_expect_str_eq(status, "200", "a key added while the broker runs");

    /* Replaced (written beside, then renamed over, as a Secret's update or
     * an editor does): the new key in, the old one out. */
    char from[4400], to[4400];
    snprintf(from, sizeof from, "%s/stranger.key", t.keys);
    snprintf(to, sizeof to, "%s/late.key", t.agents);
    snprintf(path, sizeof path, "%s/late.key.new", t.root);
    s_copy(from, path);
    cr_assert_eq(rename(path, to), 0);
    s_status(auth, &t, "stranger", BROKER_AUTH_AGENTS, status);
    cr_expect_str_eq(status, "200", "the replacing key");
    s_status(auth, &t, "late", BROKER_AUTH_AGENTS, status);
    cr_expect_str_eq(status, "400", "the replaced key");

    /* Removed: refused at the next handshake. */
    snprintf(path, sizeof path, "%s/a1.key", t.agents);
    cr_assert_eq(unlink(path), 0);
    s_status(auth, &t, "a1", BROKER_AUTH_AGENTS, status);
    cr_expect_str_eq(status, "400", "a key removed while the broker runs");

    /* The folder itself taken away: nobody in that role, the others as before. */
    test_rm_tree(t.agents);
    s_status(auth, &t, "stranger", BROKER_AUTH_AGENTS, status);
    cr_expect_str_eq(status, "400", "a folder taken away admits nobody");
    s_status(auth, &t, "c1", BROKER_AUTH_WORKERS, status);
    cr_expect_str_eq(status, "200");
    cr_assert_eq(mkdir(t.agents, 0700), 0);
    s_copy(from, to);
    s_status(auth, &t, "stranger", BROKER_AUTH_AGENTS, status);
    cr_expect_str_eq(status, "200", "and admits again once it is back");
    broker_auth_destroy(&auth);
    test_rm_tree(t.root);
}

Test(broker_auth, user_is_compares_the_role_before_the_colon)
{
    cr_expect(broker_auth_user_is("collector:c1", "collector"));
    cr_expect(broker_auth_user_is("operator:op", "operator"));
    cr_expect(broker_auth_user_is("agent:", "agent"), "a role with an empty name is still the role");
    cr_expect_not(broker_auth_user_is("collector", "collector"), "no colon: not a User-Id this handler gives");
    cr_expect_not(broker_auth_user_is("collectors:c1", "collector"));
    cr_expect_not(broker_auth_user_is("analyzer:collector", "collector"));
    cr_expect_not(broker_auth_user_is("agent:a1", "operator"), "an agent is not an operator");
    cr_expect_not(broker_auth_user_is("", "agent"));
    cr_expect_not(broker_auth_user_is(NULL, "agent"));
}
