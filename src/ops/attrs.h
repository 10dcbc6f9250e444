/* attrs.h - attributes from an already parsed cJSON object (graphs, port). */
#ifndef NXVK_ATTRS_H
#define NXVK_ATTRS_H
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>

#include "../core/internal.h"

int nxvk_attrs_from_cjson(const nxvk_op_desc *op, const cJSON *obj, nxvk_attrs *out);
#endif
