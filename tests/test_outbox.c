/* The broker's outbox (broker/outbox.h): a promise leaves only once the
 * journal has synced its mark, what follows it to the same peer waits behind
 * it, other peers' messages do not, and a revised message goes in its place.
 * Real sockets on inproc: a ROUTER as the broker's, DEALERs as its peers. */
#include "outbox.h"

#include <criterion/criterion.h>
#include <string.h>

#include "wire_zmq.h"

typedef struct {
    zsock_t *router;
    zsock_t *a, *b;
    zframe_t *peer_a, *peer_b;
    char sent[16][8];  /* bodies in the order the outbox sent them */
    int n_sent;
} rig_t;

static void s_sent(void *arg, const outbox_msg_t *msg, size_t size, bool held, pf_status_t rc, const pf_error_t *err)
{
    (void) msg;
    (void) held;
    rig_t *rig = arg;
    cr_assert_eq(rc, PF_OK, "%s", err->msg);
    cr_assert_lt(rig->n_sent, 16);
    cr_assert_lt(size, 8);
    /* The body has gone to the socket: its text was noted by s_body. */
    snprintf(rig->sent[rig->n_sent++], 8, "%zu", size);
}

/* A peer that says hello, so that the ROUTER knows its routing id. */
static zframe_t *s_peer(rig_t *rig, zsock_t **dealer, const char *endpoint)
{
    *dealer = zsock_new_dealer(endpoint);
    cr_assert_not_null(*dealer);
    zstr_send(*dealer, "hello");
    zmsg_t *msg = zmsg_recv(rig->router);
    cr_assert_not_null(msg);
    zframe_t *peer = zmsg_pop(msg);
    zmsg_destroy(&msg);
    return peer;
}

static void s_rig(rig_t *rig)
{
    memset(rig, 0, sizeof *rig);
    char endpoint[64];
    snprintf(endpoint, sizeof endpoint, "inproc://outbox-%p", (void *) rig);
    rig->router = zsock_new(ZMQ_ROUTER);
    cr_assert_not_null(rig->router);
    wire_zmq_configure(rig->router, 1 << 20, 100);
    cr_assert_eq(zsock_bind(rig->router, "%s", endpoint), 0);
    rig->peer_a = s_peer(rig, &rig->a, endpoint);
    rig->peer_b = s_peer(rig, &rig->b, endpoint);
}

static void s_unrig(rig_t *rig)
{
    zframe_destroy(&rig->peer_a);
    zframe_destroy(&rig->peer_b);
    zsock_destroy(&rig->a);
    zsock_destroy(&rig->b);
    zsock_destroy(&rig->router);
}

/* A body of `len` bytes of `c`: its length tells the messages apart in the
 * sent log, its bytes on the wire. */
static zframe_t *s_body(char c, size_t len)
{
    zframe_t *f = zframe_new(NULL, len);
    memset(zframe_data(f), c, len);
    return f;
}

static void s_send(outbox_t *out, zframe_t *peer, char c, size_t len, uint64_t mark, uint64_t synced, int kind)
{
    zframe_t *body = s_body(c, len);
    pf_error_t err;
    cr_assert_eq(outbox_send(out, peer, &body, mark, synced, kind, "job-1", &err), PF_OK, "%s", err.msg);
    cr_assert_null(body, "the outbox takes the body");
}

/* The next message `dealer` received: its first byte. */
static char s_recv(zsock_t *dealer)
{
    zsock_set_rcvtimeo(dealer, 10000);
    zframe_t *f = zframe_recv(dealer);
    cr_assert_not_null(f, "a message was due");
    char c = (char) zframe_data(f)[0];
    zframe_destroy(&f);
    return c;
}

Test(outbox, a_promise_waits_for_its_mark_and_what_follows_it_to_its_peer_waits_behind_it)
{
    rig_t rig;
    s_rig(&rig);
    outbox_t *out = outbox_new(rig.router, s_sent, &rig);
    s_send(out, rig.peer_a, 'k', 1, 5, 0, OUTBOX_SUBMIT_ACK); /* the ack of a record at mark 5 */
    s_send(out, rig.peer_a, 'q', 2, 0, 0, OUTBOX_PLAIN);      /* "queued", after it */
    s_send(out, rig.peer_b, 'd', 3, 0, 0, OUTBOX_PLAIN);      /* another peer's dispatch */
    cr_expect_eq(rig.n_sent, 1, "only the other peer's message left at once");
    cr_expect_str_eq(rig.sent[0], "3");
    cr_expect_eq(outbox_held(out), 2);
    outbox_release(out, 4);
    cr_expect_eq(rig.n_sent, 1, "mark 5 is not synced at 4: nothing more leaves");
    outbox_release(out, 5);
    cr_assert_eq(rig.n_sent, 3);
    cr_expect_str_eq(rig.sent[1], "1", "the ack first");
    cr_expect_str_eq(rig.sent[2], "2", "then what followed it");
    cr_expect_eq(outbox_held(out), 0);
    cr_expect_eq(s_recv(rig.a), 'k');
    cr_expect_eq(s_recv(rig.a), 'q');
    cr_expect_eq(s_recv(rig.b), 'd');
    outbox_destroy(&out);
    s_unrig(&rig);
}

Test(outbox, each_peer_is_released_in_its_own_order)
{
    rig_t rig;
    s_rig(&rig);
    outbox_t *out = outbox_new(rig.router, s_sent, &rig);
    s_send(out, rig.peer_a, 'a', 1, 10, 0, OUTBOX_PASS_ACK);
    s_send(out, rig.peer_b, 'b', 2, 12, 0, OUTBOX_PASS_ACK);
    s_send(out, rig.peer_a, 'c', 3, 0, 0, OUTBOX_PLAIN);
    s_send(out, rig.peer_b, 'e', 4, 0, 0, OUTBOX_PLAIN);
    outbox_release(out, 10);
    cr_assert_eq(rig.n_sent, 2, "peer a's two go; peer b's wait for mark 12");
    cr_expect_str_eq(rig.sent[0], "1");
    cr_expect_str_eq(rig.sent[1], "3");
    /* A new message to a peer with nothing held goes at once; to one with a
     * held message, behind it, even with its own mark synced. */
    s_send(out, rig.peer_a, 'f', 5, 10, 10, OUTBOX_PLAIN);
    s_send(out, rig.peer_b, 'g', 6, 10, 10, OUTBOX_PLAIN);
    cr_assert_eq(rig.n_sent, 3);
    cr_expect_str_eq(rig.sent[2], "5");
    outbox_release(out, 12);
    cr_assert_eq(rig.n_sent, 6);
    cr_expect_str_eq(rig.sent[3], "2");
    cr_expect_str_eq(rig.sent[4], "4");
    cr_expect_str_eq(rig.sent[5], "6");
    outbox_destroy(&out);
    s_unrig(&rig);
}

/* A failed sync's revision: the submit ack becomes another body, the pass
 * ack is dropped. */
static void s_revise(void *arg, outbox_msg_t *msg)
{
    (void) arg;
    if ((msg->kind & ~OUTBOX_COUNTED) == OUTBOX_SUBMIT_ACK) {
        zframe_destroy(&msg->body);
        msg->body = s_body('r', 7);
    } else if ((msg->kind & ~OUTBOX_COUNTED) == OUTBOX_PASS_ACK) {
        zframe_destroy(&msg->body);
    }
}

Test(outbox, a_revised_message_goes_in_its_place_and_a_dropped_one_not_at_all)
{
    rig_t rig;
    s_rig(&rig);
    outbox_t *out = outbox_new(rig.router, s_sent, &rig);
    s_send(out, rig.peer_a, 'k', 1, 3, 0, OUTBOX_SUBMIT_ACK);
    s_send(out, rig.peer_a, 'q', 2, 0, 0, OUTBOX_PLAIN);
    s_send(out, rig.peer_b, 'p', 3, 3, 0, OUTBOX_PASS_ACK);
    outbox_revise(out, s_revise, NULL);
    outbox_release(out, 3);
    cr_assert_eq(rig.n_sent, 2);
    cr_expect_str_eq(rig.sent[0], "7", "the refusal, where the ack was");
    cr_expect_str_eq(rig.sent[1], "2");
    cr_expect_eq(outbox_held(out), 0, "the dropped one is gone");
    cr_expect_eq(s_recv(rig.a), 'r');
    cr_expect_eq(s_recv(rig.a), 'q');
    /* Nothing is held for peer b once its dropped message is gone: its next goes at once. */
    s_send(out, rig.peer_b, 'z', 4, 0, 3, OUTBOX_PLAIN);
    cr_expect_eq(rig.n_sent, 3);
    cr_expect_eq(s_recv(rig.b), 'z');
    outbox_destroy(&out);
    s_unrig(&rig);
}

Test(outbox, without_marks_nothing_is_held)
{
    rig_t rig;
    s_rig(&rig);
    outbox_t *out = outbox_new(rig.router, s_sent, &rig);
    s_send(out, rig.peer_a, 'x', 1, 0, 0, OUTBOX_SUBMIT_ACK);
    s_send(out, rig.peer_a, 'y', 2, 0, 0, OUTBOX_PLAIN);
    cr_expect_eq(rig.n_sent, 2);
    cr_expect_eq(outbox_held(out), 0);
    outbox_destroy(&out);
    s_unrig(&rig);
}

Test(outbox, held_messages_are_dropped_at_destroy)
{
    rig_t rig;
    s_rig(&rig);
    outbox_t *out = outbox_new(rig.router, s_sent, &rig);
    s_send(out, rig.peer_a, 'k', 1, 9, 0, OUTBOX_FEEDBACK);
    outbox_destroy(&out); /* ASan: nothing leaks */
    cr_expect_eq(rig.n_sent, 0);
    s_unrig(&rig);
}
