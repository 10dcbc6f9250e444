/* attrs.h - attributes from an already parsed cJSON object (graphs, port). */
#ifndef NXVK_ATTRS_H
#define NXVK_ATTRS_H
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>

#include "../core/internal.h"

int nxvk_attrs_from_cjson(const nxvk_op_desc *op, const cJSON *obj, nxvk_attrs *out);
/* A graph from an already parsed JSON object (the port's run request), as
 * nxvk_graph_parse reads one from text (whose nesting it checks first). */
int nxvk_graph_from_cjson(const cJSON *root, const char *origin, nxvk_graph **out);
#endif
