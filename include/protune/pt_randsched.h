/* pt_randsched.h: schedules drawn at random from the legal ones, and the
 * simple baseline schedule a server answers with when it has no better one.
 *
 * pt_randsched() draws a complete schedule for model `m` from the generator
 * `seed`: compute and store sites (inline, root, at a loop of a consumer,
 * sliding storage), tilings with safe tail strategies, reorders, parallel,
 * vector and unroll annotations. Every schedule it returns passes
 * pt_sched_check(); the same model and seed give the same schedule.
 *
 * pt_sched_baseline() gives a deterministic, reasonable schedule: every Func
 * that is not a cheap pointwise single-consumer stage at root, the outermost
 * pure dim parallel, the innermost pure dim split by the target's vector
 * width and vectorized.
 *
 * Ownership: the caller frees the returned schedule with pt_sched_free().
 * Returns NULL only when out of memory. No global state.
 */
#ifndef PROTUNE_PT_RANDSCHED_H
#define PROTUNE_PT_RANDSCHED_H

#include <stdint.h>

#include "protune/pt_model.h"
#include "protune/pt_sched.h"

struct pt_sched *pt_randsched(const struct pt_model *m, uint64_t seed);
struct pt_sched *pt_sched_baseline(const struct pt_model *m);

/* The native vector width in lanes of a type of `bits` bits on the model's
 * target (AVX-512: 512 bits, AVX/AVX2: 256, otherwise 128). */
int pt_model_vector_lanes(const struct pt_model *m, int bits);

#endif
