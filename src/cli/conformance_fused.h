/*
 * conformance_fused.h - the fused-graph class of `nxvk conformance`: random
 * graphs of 2 to 12 elementwise ops from the op table (broadcast operands,
 * comparisons feeding select), run fused and unfused, each output checked
 * against the CPU reference within the limits composed over its ops, and
 * fused against unfused.  Front-end code: it sees the engine through nxvk.h.
 */
#ifndef NXVK_CONFORMANCE_FUSED_H
#define NXVK_CONFORMANCE_FUSED_H

#include "cli.h"

/* ngraphs graphs from seed (graph i uses seed + i), f32, f64 (where the
 * device has it) and i32 in turn.  Prints one TAP line per graph, numbered
 * from *passed + *failed + 1, with `#` diagnostics (the graph, the first
 * bad element) on failure, and one line saying how many graphs fused;
 * adds to *passed and *failed.  Returns 0, or an engine code (NXVK_E_*)
 * when the device fails (lost, out of memory): not a wrong result. */
int conformance_fused_class(nxvk_ctx *c, unsigned seed, int ngraphs, int *passed, int *failed);

#endif
