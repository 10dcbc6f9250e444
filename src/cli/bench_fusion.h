/*
 * bench_fusion.h - `nxvk bench fusion`: what fusing an elementwise chain
 * saves.  An 8-op chain of exact f32 ops from the op table (binary ops
 * reading a second input, unary ops between) on N elements, fused into one
 * kernel and unfused, against one binary op (the table's first: add) on the
 * same N; GPU times from timestamps (median of repeats after a warm-up).
 * Then the cold compile (glslang and pipeline, with an empty cache folder)
 * and the warm start (a fresh context with the cache filled: from parsing
 * the graph to its result on the host).  Front-end code: nxvk.h only.
 */
#ifndef NXVK_BENCH_FUSION_H
#define NXVK_BENCH_FUSION_H

#include <stdio.h>

#include "../nxvk.h"

/* elements <= 0: 16M.  min_time: seconds each timed measurement repeats
 * for (at least 5 repeats).  Prints a table to out; json_report, when not
 * NULL, is a cJSON object that gets a "fusion" member with every figure.
 * Returns NXVK_OK, NXVK_E_MISMATCH when the fused result is outside its
 * limit (printed), or the engine's error (nxvk_errmsg() says which). */
int bench_fusion_run(nxvk_ctx *c, long elements, double min_time, FILE *out, void *json_report);

#endif
