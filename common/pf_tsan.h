/* pf_tsan: tells ThreadSanitizer about an ordering it cannot see.
 *
 * Threads here hand objects over through ZeroMQ sockets (the collector's
 * slot threads get a job_run_t with "RUN" and give it back with "DONE").
 * libzmq orders the two sides with atomics inside its own uninstrumented
 * library, so TSan sees no happens-before and reports the loop freeing a run
 * the slot thread read as a race. The sender marks the object released just
 * before the message goes, the receiver acquired just after it came: the
 * edge libzmq really provides, stated for the one object, so races on
 * anything else are still found. No code at all outside a TSan build. */
#ifndef PF_TSAN_H
#define PF_TSAN_H

#if defined(__SANITIZE_THREAD__)
#define PF_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define PF_TSAN 1
#endif
#endif

#ifdef PF_TSAN
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#define pf_tsan_handed_over(p) __tsan_release((void *) (p))
#define pf_tsan_taken_over(p) __tsan_acquire((void *) (p))
#else
#define pf_tsan_handed_over(p) ((void) (p))
#define pf_tsan_taken_over(p) ((void) (p))
#endif

#endif
