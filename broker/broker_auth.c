#include "broker_auth.h"

#include <assert.h>
#include <string.h>

#include "broker_keys.h"
#include "pf_log.h"

#define LOG "auth"
#define ZAP_ENDPOINT "inproc://zeromq.zap.01"

struct broker_auth_t {
    zsock_t *zap;
    broker_keys_t *agents;
    broker_keys_t *collectors;
    broker_keys_t *analyzers;
    broker_keys_t *operators;
};

static broker_keys_t *s_store(const char *dir, const char *role, pf_error_t *err, bool *ok)
{
    *ok = true;
    if (!dir || !*dir) {
        pf_log_warn(LOG, "no %s keys folder: no %s may connect", role, role);
        return NULL;
    }
    broker_keys_t *store = broker_keys_new(dir, role, err);
    *ok = store != NULL;
    return store;
}

broker_auth_t *broker_auth_new(const char *agent_dir, const char *collector_dir, const char *analyzer_dir,
                               const char *operator_dir, pf_error_t *err)
{
    broker_auth_t *self = calloc(1, sizeof *self);
    if (!self) {
        pf_error_set(err, PF_ENOMEM, "out of memory");
        return NULL;
    }
    bool ok_a = true, ok_c = true, ok_n = true, ok_o = true;
    self->agents = s_store(agent_dir, "agent", err, &ok_a);
    self->collectors = ok_a ? s_store(collector_dir, "collector", err, &ok_c) : NULL;
    self->analyzers = ok_a && ok_c ? s_store(analyzer_dir, "analyzer", err, &ok_n) : NULL;
    /* Operators are optional: no folder, no warning. */
    if (ok_a && ok_c && ok_n && operator_dir && *operator_dir)
        self->operators = s_store(operator_dir, "operator", err, &ok_o);
    if (!ok_a || !ok_c || !ok_n || !ok_o) {
        broker_auth_destroy(&self);
        return NULL;
    }
    self->zap = zsock_new(ZMQ_REP);
    if (!self->zap || zsock_bind(self->zap, ZAP_ENDPOINT) != 0) {
        pf_error_set(err, PF_EIO, "cannot start the authentication handler: %s (another one in this process?)",
                     zmq_strerror(zmq_errno()));
        broker_auth_destroy(&self);
        return NULL;
    }
    return self;
}

void broker_auth_destroy(broker_auth_t **self_p)
{
    assert(self_p);
    broker_auth_t *self = *self_p;
    if (!self)
        return;
    zsock_destroy(&self->zap);
    broker_keys_destroy(&self->agents);
    broker_keys_destroy(&self->collectors);
    broker_keys_destroy(&self->analyzers);
    broker_keys_destroy(&self->operators);
    free(self);
    *self_p = NULL;
}

zsock_t *broker_auth_socket(broker_auth_t *self) { return self->zap; }

/* Decides one connection: the User-Id on success, NULL (and why) on refusal. */
static bool s_judge(broker_auth_t *self, const char *domain, const char *mechanism, zframe_t *key, char *user,
                    size_t cap, const char **why)
{
    if (strcmp(mechanism, "CURVE") != 0) {
        *why = "the broker accepts CURVE connections only";
        return false;
    }
    if (!key || zframe_size(key) != 32) {
        *why = "no CURVE public key";
        return false;
    }
    char txt[41];
    zmq_z85_encode(txt, zframe_data(key), 32);
    const char *name = NULL, *role = NULL;
    if (strcmp(domain, BROKER_AUTH_AGENTS) == 0) {
        if (self->operators && (name = broker_keys_lookup(self->operators, txt)))
            role = "operator";
        else if (self->agents && (name = broker_keys_lookup(self->agents, txt)))
            role = "agent";
    } else if (strcmp(domain, BROKER_AUTH_WORKERS) == 0) {
        if (self->collectors && (name = broker_keys_lookup(self->collectors, txt)))
            role = "collector";
        else if (self->analyzers && (name = broker_keys_lookup(self->analyzers, txt)))
            role = "analyzer";
    }
    if (!name) {
        *why = strcmp(domain, BROKER_AUTH_AGENTS) == 0 ? "not an agent key" : "not a collector or analyzer key";
        return false;
    }
    snprintf(user, cap, "%s:%s", role, name);
    return true;
}

void broker_auth_handle(broker_auth_t *self)
{
    zmsg_t *request = zmsg_recv(self->zap);
    if (!request)
        return;
    /* RFC 27: version, request id, domain, address, identity, mechanism,
     * credentials. */
    char *version = zmsg_popstr(request);
    char *request_id = zmsg_popstr(request);
    char *domain = zmsg_popstr(request);
    char *address = zmsg_popstr(request);
    char *identity = zmsg_popstr(request);
    char *mechanism = zmsg_popstr(request);
    zframe_t *key = zmsg_pop(request);
    char user[256] = "";
    const char *why = "malformed ZAP request";
    bool ok = version && streq(version, "1.0") && domain && mechanism &&
              s_judge(self, domain, mechanism, key, user, sizeof user, &why);
    if (ok) {
        pf_log_info(LOG, "%s from %s: admitted as %s", domain, address ? address : "?", user);
    } else {
        char txt[41] = "-";
        if (key && zframe_size(key) == 32)
            zmq_z85_encode(txt, zframe_data(key), 32);
        pf_log_warn(LOG, "%s from %s: refused key %s: %s", domain ? domain : "?", address ? address : "?", txt, why);
    }
    zmsg_t *reply = zmsg_new();
    zmsg_addstr(reply, "1.0");
    zmsg_addstr(reply, request_id ? request_id : "");
    zmsg_addstr(reply, ok ? "200" : "400");
    zmsg_addstr(reply, ok ? "OK" : why);
    zmsg_addstr(reply, ok ? user : "");
    /* Metadata (ZMTP 3.0 properties: name length, name, 4-byte big-endian
     * value length, value): the connection's public key as BROKER_AUTH_KEY,
     * what a job's owner is (names in key files need not be unique). */
    uint8_t meta[1 + sizeof BROKER_AUTH_KEY - 1 + 4 + 40];
    size_t meta_len = 0;
    if (ok && key && zframe_size(key) == 32) {
        char txt[41];
        zmq_z85_encode(txt, zframe_data(key), 32);
        meta[meta_len++] = (uint8_t) (sizeof BROKER_AUTH_KEY - 1);
        memcpy(meta + meta_len, BROKER_AUTH_KEY, sizeof BROKER_AUTH_KEY - 1);
        meta_len += sizeof BROKER_AUTH_KEY - 1;
        uint8_t len_be[4] = {0, 0, 0, 40};
        memcpy(meta + meta_len, len_be, 4);
        meta_len += 4;
        memcpy(meta + meta_len, txt, 40);
        meta_len += 40;
    }
    zmsg_addmem(reply, meta, meta_len);
    zmsg_send(&reply, self->zap);
    zstr_free(&version);
    zstr_free(&request_id);
    zstr_free(&domain);
    zstr_free(&address);
    zstr_free(&identity);
    zstr_free(&mechanism);
    zframe_destroy(&key);
    zmsg_destroy(&request);
}

bool broker_auth_user_is(const char *user_id, const char *role)
{
    size_t n = strlen(role);
    return user_id && strncmp(user_id, role, n) == 0 && user_id[n] == ':';
}
