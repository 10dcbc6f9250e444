/*
 * fusion.h - the fusion planner and the recording of fused kernels (used by
 * graph.c); the public side (nxvk_plan, nxvk_compare_nodes) is in nxvk.h.
 */
#ifndef NXVK_FUSION_H
#define NXVK_FUSION_H

#include "ops.h"

/* Split the graph's nodes into steps in an order that respects every
 * dependency: fused groups (enabled) and single ops.  metas: every value's
 * dtype and shape (inputs, then nodes). */
int nxvk_fusion_plan(nxvk_ctx *c, const nxvk_graph *g, const nxvk_meta *metas, bool enabled,
                     nxvk_plan **out);

/* Record one fused step: generate its GLSL, get its kernel (this process,
 * the on-disk cache in cache_dir (NULL: off), or glslang), create its
 * output tensors in values[] and dispatch.  Fills the step's source, key,
 * cache notes and times. */
int nxvk_fusion_record(nxvk_rec *r, const nxvk_graph *g, const nxvk_meta *metas,
                       nxvk_plan_step *st, nxvk_tensor **values, const char *cache_dir);

/* The GLSL of a fused step (malloc'd), with the header line that makes its
 * content address; for tests and --explain.  f16_cvt, fast16: nxvk_cg_program's. */
int nxvk_fusion_glsl(const nxvk_graph *g, const nxvk_meta *metas, const nxvk_plan_step *st,
                     int f16_cvt, int fast16, char **glsl);

#endif
