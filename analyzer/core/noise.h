/* noise: run-to-run noise in a profiler's counters, drawn the same way on
 * every machine, for the close calls (close_call.h) of every analysis.
 *
 * A reading's factor for one counter is exp(sigma * g), g a near-normal drawn
 * from a hash of the kernel's name, the reading and the counter: the same
 * capture gives the same close calls on every run. */
#ifndef NOISE_H
#define NOISE_H

#include <stdint.h>

/* One sigma of the noise a close call is judged under (bench/stability.py's
 * model at 1%: twice the 90th percentile of the committed repeats), and how
 * many readings it judges (each costs one analysis of the kernel). */
#define NOISE_SIGMA 0.01
#define NOISE_READINGS 8

/* The seed of reading `reading` of the kernel `name`. */
uint64_t noise_seed(const char *name, unsigned reading);

/* The factor for `counter` (a hash naming the counter: fnv1a of its name) in
 * the reading `seed`: exp(sigma * g). */
double noise_factor(uint64_t seed, uint64_t counter, double sigma);

#endif
