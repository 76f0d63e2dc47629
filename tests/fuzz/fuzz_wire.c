/* Fuzz target for the wire layer: any bytes through one of the four
 * unpackers (the first byte picks which, the rest is the message). Whatever
 * comes back must be a valid message that passes its own check and packs
 * again, or NULL with an error status and message; an Envelope must be taken
 * or refused alike by the broker's decode without pass file contents
 * (wire_envelope_unpack_no_files); anything else aborts.
 * Seed corpus: tests/fixtures/wire/ (a packed message of every type and
 * Envelope body; tests/test_wire.c checks them and can rewrite them).
 *
 *   clang build with -DPROFEED_FUZZ=ON: a libFuzzer binary (fuzz_wire)
 *   every build: fuzz_wire_replay, a ctest that replays the corpus */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t len);

static void s_expect_valid(const ProtobufCMessage *msg)
{
    pf_error_t err = {0};
    if (wire_check(msg, &err) != PF_OK)
        abort(); /* accepted a message that fails its own check */
}

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t len)
{
    if (len == 0)
        return 0;
    const uint8_t *data = bytes + 1;
    size_t size = len - 1;
    pf_error_t err = {0};
    uint8_t *again = NULL;
    size_t again_size = 0;
    bool accepted = false;

    switch (bytes[0] % 4) {
    case 0: {
        Profeed__Envelope *msg = wire_envelope_unpack(data, size, WIRE_MAX_MSG, &err);
        if ((accepted = msg != NULL)) {
            s_expect_valid(&msg->base);
            again = wire_envelope_pack(msg, WIRE_MAX_MSG, &again_size, &err);
        }
        wire_envelope_destroy(&msg);
        /* The broker's decode, without pass file contents, must take and
         * refuse exactly what the whole decode does. */
        pf_error_t light_err = {0};
        Profeed__Envelope *light = wire_envelope_unpack_no_files(data, size, WIRE_MAX_MSG, &light_err);
        if ((light != NULL) != accepted && light_err.code != PF_ENOMEM && err.code != PF_ENOMEM)
            abort();
        if (light)
            s_expect_valid(&light->base);
        wire_envelope_destroy(&light);
        break;
    }
    case 1: {
        Profeed__JobRequest *msg = wire_job_request_unpack(data, size, WIRE_MAX_MSG, &err);
        if ((accepted = msg != NULL)) {
            s_expect_valid(&msg->base);
            again = wire_job_request_pack(msg, WIRE_MAX_MSG, &again_size, &err);
        }
        wire_job_request_destroy(&msg);
        break;
    }
    case 2: {
        Profeed__PassOutput *msg = wire_pass_output_unpack(data, size, WIRE_MAX_MSG, &err);
        if ((accepted = msg != NULL)) {
            s_expect_valid(&msg->base);
            again = wire_pass_output_pack(msg, WIRE_MAX_MSG, &again_size, &err);
        }
        wire_pass_output_destroy(&msg);
        break;
    }
    default: {
        Profeed__Feedback *msg = wire_feedback_unpack(data, size, WIRE_MAX_MSG, &err);
        if ((accepted = msg != NULL)) {
            s_expect_valid(&msg->base);
            again = wire_feedback_pack(msg, WIRE_MAX_MSG, &again_size, &err);
        }
        wire_feedback_destroy(&msg);
        break;
    }
    }
    if (accepted && !again)
        abort(); /* accepted, but cannot be sent on */
    if (!accepted && (err.code == PF_OK || !err.msg[0]))
        abort(); /* refused without saying why */
    free(again);
    return 0;
}
