/* pf_assert: an invariant checked in every build, release included.
 *
 * assert() goes away under NDEBUG, which is how users build. A few guards
 * protect state whose corruption would be silent and lasting (job_table's
 * state machine: a job moved along an arrow it does not have is lost or run
 * twice, and the journal would write it down), so, as libzmq keeps
 * zmq_assert in release builds, they stay: a broken one names itself and the
 * process aborts, leaving a core, rather than serving on from a wrong state.
 * For our own bugs only, never for input (STYLE.md 3). */
#ifndef PF_ASSERT_H
#define PF_ASSERT_H

#define pf_assert(cond)                                             \
    do {                                                            \
        if (!(cond))                                                \
            pf_assert_fail(#cond, __FILE__, __LINE__, __func__);    \
    } while (0)

/* Writes "file:line: func: assertion `what` failed" to stderr and aborts. */
_Noreturn void pf_assert_fail(const char *what, const char *file, int line, const char *func);

#endif
