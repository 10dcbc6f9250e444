/*
 * cases_index.c - the indexing ops' cases (NXVK_KIND_INDEX: broadcast pad
 * dynamic_slice put_slice gather take take_along_axis indexed_add
 * indexed_put), one case rule of cases.c's kind_rules[]: an index operand
 * must point mostly inside the tensor, so the rule's input hook fills the
 * indices (knowing the bound of each) and the other data operands; input
 * 0 takes the case's class.  The index dtype cycles through every integer
 * dtype over the cases.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cases.h"

static const nxvk_dtype ix_dtypes[] = {NXVK_I32, NXVK_I64, NXVK_U8,  NXVK_I8,
                                       NXVK_U16, NXVK_I16, NXVK_U32, NXVK_U64};
#define NIX ((int)(sizeof ix_dtypes / sizeof ix_dtypes[0]))

static nxvk_shape sh(int rank, int64_t d0, int64_t d1, int64_t d2) {
  nxvk_shape s = {rank, {d0, d1, d2}};
  return s;
}

/* Which input holds the indices (-1: none). */
static int index_input(const nxvk_op_desc *op) {
  if (strcmp(op->name, "put_slice") == 0) return 2;
  if (strcmp(op->name, "broadcast") == 0 || strcmp(op->name, "pad") == 0) return -1;
  return 1;
}

static int add(case_gen *g, int ncase, int nin, const nxvk_shape *shapes, const nxvk_attrs *a) {
  nxvk_dtype dts[CASE_MAX_IN];
  int ii = index_input(g->op);
  for (int i = 0; i < nin; i++) dts[i] = i == ii ? ix_dtypes[ncase % NIX] : g->dt;
  char where[240];
  where[0] = 0;
  for (int i = 0; i < nin; i++) {
    char b[100];
    size_t l = strlen(where);
    snprintf(where + l, sizeof where - l, "%s%s", i ? "," : "shapes=", nxvk_shape_str(&shapes[i], b, sizeof b));
  }
  if (ii >= 0) {
    size_t l = strlen(where);
    snprintf(where + l, sizeof where - l, " indices=%s", nxvk_dtype_name(dts[ii]));
  }
  return case_add(g, nin, shapes, dts, a, FILL_NORMAL, where);
}

static void list(int64_t *dst, int *n, int count, int64_t a0, int64_t a1, int64_t a2) {
  int64_t v[3] = {a0, a1, a2};
  for (int i = 0; i < count; i++) dst[i] = v[i];
  if (n) *n = count;
}

static void axes(nxvk_attrs *a, int n, int a0, int a1) {
  a->set |= NXVK_ATTR_AXES;
  a->naxes = n;
  a->axes[0] = a0;
  a->axes[1] = a1;
}

int cases_index_data(case_gen *g) {
  const char *nm = g->op->name;
  int j = 0, rc = 0;
  nxvk_attrs a;
#define CASE(nin, s0, s1, s2)                                          \
  do {                                                                 \
    nxvk_shape S_[3] = {s0, s1, s2};                                   \
    if (rc == 0) rc = add(g, j++, nin, S_, &a);                        \
    memset(&a, 0, sizeof a);                                           \
  } while (0)
  memset(&a, 0, sizeof a);
  nxvk_shape none = {0, {0}};
  if (strcmp(nm, "broadcast") == 0) {
    a.set = NXVK_ATTR_SHAPE, a.shape = sh(2, 2, 3, 0);
    CASE(1, sh(1, 3, 0, 0), none, none);
    a.set = NXVK_ATTR_SHAPE, a.shape = sh(2, 3, 2, 0), axes(&a, 1, 0, 0);
    CASE(1, sh(1, 3, 0, 0), none, none);
    a.set = NXVK_ATTR_SHAPE, a.shape = sh(3, 4, 257, 2), axes(&a, 2, 0, 2);
    CASE(1, sh(2, 1, 2, 0), none, none);
    a.set = NXVK_ATTR_SHAPE, a.shape = sh(1, 5, 0, 0);
    CASE(1, sh(0, 0, 0, 0), none, none);
    a.set = NXVK_ATTR_SHAPE, a.shape = sh(3, 2, 0, 3), axes(&a, 2, 1, 2);
    CASE(1, sh(2, 0, 1, 0), none, none);
  } else if (strcmp(nm, "pad") == 0) {
    a.set = NXVK_ATTR_PAD, a.nlow = 1, list(a.low, NULL, 1, 2, 0, 0), list(a.high, NULL, 1, 3, 0, 0),
    list(a.interior, NULL, 1, 1, 0, 0);
    CASE(2, sh(1, 5, 0, 0), none, none);
    a.set = NXVK_ATTR_PAD, a.nlow = 2, list(a.low, NULL, 2, -1, 0, 0), list(a.high, NULL, 2, 2, -2, 0),
    list(a.interior, NULL, 2, 0, 2, 0);
    CASE(2, sh(2, 4, 3, 0), none, none);
    a.set = NXVK_ATTR_PAD, a.nlow = 1, list(a.low, NULL, 1, 1, 0, 0), list(a.high, NULL, 1, 1, 0, 0);
    CASE(2, sh(1, 0, 0, 0), none, none);
    a.set = NXVK_ATTR_PAD, a.nlow = 2, list(a.low, NULL, 2, -3, 1, 0), list(a.high, NULL, 2, 0, -4, 0),
    list(a.interior, NULL, 2, 3, 1, 0);
    CASE(2, sh(2, 3, 257, 0), none, none);
  } else if (strcmp(nm, "dynamic_slice") == 0) {
    a.set = NXVK_ATTR_SLICE, a.nslice = 1, list(a.length, NULL, 1, 4, 0, 0), list(a.stride, NULL, 1, 1, 0, 0);
    CASE(2, sh(1, 10, 0, 0), sh(1, 1, 0, 0), none);
    a.set = NXVK_ATTR_SLICE, a.nslice = 2, list(a.length, NULL, 2, 2, 5, 0), list(a.stride, NULL, 2, 1, 2, 0);
    CASE(2, sh(2, 6, 7, 0), sh(1, 2, 0, 0), none);
    a.set = NXVK_ATTR_SLICE, a.nslice = 1, list(a.length, NULL, 1, 257, 0, 0), list(a.stride, NULL, 1, 1, 0, 0);
    CASE(2, sh(1, 300, 0, 0), sh(1, 1, 0, 0), none);
    a.set = NXVK_ATTR_SLICE, a.nslice = 1, list(a.length, NULL, 1, 0, 0, 0), list(a.stride, NULL, 1, 1, 0, 0);
    CASE(2, sh(1, 3, 0, 0), sh(1, 1, 0, 0), none);
  } else if (strcmp(nm, "put_slice") == 0) {
    CASE(3, sh(1, 10, 0, 0), sh(1, 4, 0, 0), sh(1, 1, 0, 0));
    CASE(3, sh(2, 5, 6, 0), sh(2, 2, 3, 0), sh(1, 2, 0, 0));
    CASE(3, sh(1, 300, 0, 0), sh(1, 257, 0, 0), sh(1, 1, 0, 0));
    CASE(3, sh(1, 3, 0, 0), sh(1, 0, 0, 0), sh(1, 1, 0, 0));
  } else if (strcmp(nm, "gather") == 0) {
    CASE(2, sh(2, 4, 5, 0), sh(2, 6, 2, 0), none);
    axes(&a, 1, 1, 0);
    CASE(2, sh(2, 4, 5, 0), sh(2, 3, 1, 0), none);
    CASE(2, sh(3, 2, 3, 4), sh(3, 2, 2, 1), none);
    axes(&a, 2, 0, 2);
    CASE(2, sh(3, 2, 3, 4), sh(2, 5, 2, 0), none);
    CASE(2, sh(1, 300, 0, 0), sh(2, 257, 1, 0), none);
    CASE(2, sh(2, 4, 5, 0), sh(2, 0, 2, 0), none);
  } else if (strcmp(nm, "take") == 0) {
    CASE(2, sh(2, 5, 4, 0), sh(1, 7, 0, 0), none);
    a.set = NXVK_ATTR_AXIS, a.axis = 1;
    CASE(2, sh(2, 3, 5, 0), sh(2, 2, 3, 0), none);
    a.set = NXVK_ATTR_AXIS, a.axis = -1;
    CASE(2, sh(1, 300, 0, 0), sh(1, 513, 0, 0), none);
    CASE(2, sh(1, 3, 0, 0), sh(1, 0, 0, 0), none);
  } else if (strcmp(nm, "take_along_axis") == 0) {
    a.set = NXVK_ATTR_AXIS, a.axis = 1;
    CASE(2, sh(2, 4, 5, 0), sh(2, 4, 7, 0), none);
    CASE(2, sh(2, 5, 3, 0), sh(2, 2, 3, 0), none);
    CASE(2, sh(1, 300, 0, 0), sh(1, 257, 0, 0), none);
  } else if (strncmp(nm, "indexed_", 8) == 0) {
    CASE(3, sh(1, 6, 0, 0), sh(2, 10, 1, 0), sh(1, 10, 0, 0));
    CASE(3, sh(2, 4, 5, 0), sh(2, 7, 1, 0), sh(2, 7, 5, 0));
    CASE(3, sh(2, 4, 5, 0), sh(2, 7, 2, 0), sh(1, 7, 0, 0));
    axes(&a, 1, 1, 0);
    CASE(3, sh(2, 3, 4, 0), sh(2, 6, 1, 0), sh(2, 6, 3, 0));
    CASE(3, sh(2, 4, 5, 0), sh(2, 3, 1, 0), sh(2, 3, 2, 0)); /* a window smaller than the axes */
    CASE(3, sh(1, 300, 0, 0), sh(2, 1000, 1, 0), sh(1, 1000, 0, 0));
    CASE(3, sh(1, 5, 0, 0), sh(2, 0, 1, 0), sh(1, 0, 0, 0));
  } else {
    return cases_fail("%s: no cases for this indexing op", nm);
  }
#undef CASE
  return rc;
}

/* The bound of index element j (positions 0..bound-1 are in range); t:
 * the case's input shapes. */
static int64_t bound_of(const nxvk_op_desc *op, const nxvk_attrs *a, const nxvk_shape *t,
                        const nxvk_shape *ix, int64_t j) {
  const char *nm = op->name;
  int K = ix->rank ? (int)ix->dim[ix->rank - 1] : 1;
  if (strcmp(nm, "dynamic_slice") == 0) return t[0].dim[j] - a->length[j] + 1;
  if (strcmp(nm, "put_slice") == 0) return t[0].dim[j] - t[1].dim[j] + 1;
  if (strcmp(nm, "gather") == 0 || strncmp(nm, "indexed_", 8) == 0) {
    int k = K ? (int)(j % K) : 0;
    int ax = (a->set & NXVK_ATTR_AXES) ? a->axes[k] : k;
    if (ax < 0) ax += t[0].rank;
    return t[0].dim[ax];
  }
  int ax = (a->set & NXVK_ATTR_AXIS) ? a->axis : 0;
  if (ax < 0) ax += t[0].rank;
  return t[0].dim[ax];
}

/* The rule's input hook (inputs 1 and 2): the indices mostly in range
 * (conformance, f->D set: some out of range and at the index dtype's
 * extremes; stress and bench: all in range), duplicates throughout; a data
 * input (pad's value, put_slice's slice, the updates) small values every
 * dtype holds exactly. */
void cases_index_input(const case_fill *f, int i, nxvk_host *h, uint64_t *rng) {
  int64_t n = nxvk_host_count(h);
  if (i != index_input(f->op)) {
    for (int64_t j = 0; j < n; j++) {
      uint64_t r = nxvk_splitmix64(rng);
      if (nxvk_dtype_is_float(h->dtype))
        nxvk_host_set(h, j, (double)((int64_t)(r % 2001) - 1000) / 64.0);
      else
        nxvk_host_set_int(h, j, (int64_t)(r >> 3) % 1000 - (h->dtype == NXVK_BOOL ? 0 : 500));
    }
    return;
  }
  bool wild = f->D != NULL;
  const nxvk_dtype_info *info = nxvk_dtype_info_of(h->dtype);
  bool sgn = info->cls == NXVK_CLASS_SIGNED;
  for (int64_t j = 0; j < n; j++) {
    uint64_t r = nxvk_splitmix64(rng);
    int64_t b = bound_of(f->op, &f->k->attrs, f->k->shape, &h->shape, j), v;
    if (b < 1) b = 1;
    if (wild && r % 8 == 0) {
      switch ((r >> 3) % 5) {
      case 0: v = -1; break;
      case 1: v = b; break;
      case 2: v = b + 7; break;
      case 3: v = sgn ? -((int64_t)1 << (info->bits - 1)) : -1; break; /* the minimum, or the maximum */
      default: v = sgn ? (int64_t)((((uint64_t)1) << (info->bits - 1)) - 1) : -1; break;
      }
    } else {
      v = (int64_t)((r >> 8) % (uint64_t)b);
    }
    nxvk_host_set_int(h, j, v);
  }
}

int cases_index_layouts(const nxvk_op_desc *op) {
  (void)op;
  return 1;
}

/* About n elements: take / gather / indexed ops move n elements through n
 * indices of a tensor of n elements; the others n elements of data. */
int cases_index_sized(case_gen *g, int layout, conf_case *k) {
  (void)layout;
  nxvk_attrs *a = &k->attrs;
  const char *nm = g->op->name;
  int64_t n = g->r->n < 1 ? 1 : g->r->n;
  int nin = 2;
  if (strcmp(nm, "broadcast") == 0) {
    nin = 1;
    k->shape[0] = sh(2, 1, n, 0);
    a->set = NXVK_ATTR_SHAPE;
    a->shape = sh(2, 2, n, 0);
  } else if (strcmp(nm, "pad") == 0) {
    k->shape[0] = sh(1, n, 0, 0);
    k->shape[1] = sh(0, 0, 0, 0);
    a->set = NXVK_ATTR_PAD, a->nlow = 1, a->low[0] = 1, a->high[0] = 1;
  } else if (strcmp(nm, "dynamic_slice") == 0) {
    k->shape[0] = sh(1, n + 1, 0, 0);
    k->shape[1] = sh(1, 1, 0, 0);
    a->set = NXVK_ATTR_SLICE, a->nslice = 1, a->length[0] = n, a->stride[0] = 1;
  } else if (strcmp(nm, "put_slice") == 0) {
    nin = 3;
    k->shape[0] = sh(1, n + 1, 0, 0);
    k->shape[1] = sh(1, n, 0, 0);
    k->shape[2] = sh(1, 1, 0, 0);
  } else if (strcmp(nm, "gather") == 0) {
    k->shape[0] = sh(1, n, 0, 0);
    k->shape[1] = sh(2, n, 1, 0);
  } else if (strcmp(nm, "take") == 0 || strcmp(nm, "take_along_axis") == 0) {
    k->shape[0] = sh(1, n, 0, 0);
    k->shape[1] = sh(1, n, 0, 0);
  } else if (strncmp(nm, "indexed_", 8) == 0) {
    nin = 3;
    k->shape[0] = sh(1, n, 0, 0);
    k->shape[1] = sh(2, n, 1, 0);
    k->shape[2] = sh(1, n, 0, 0);
  } else {
    snprintf(g->L->why, sizeof g->L->why, "no sized case for indexing op %s", nm);
    return NXVK_E_UNSUPPORTED;
  }
  k->nin = nin;
  int ii = index_input(g->op);
  for (int i = 0; i < nin; i++) k->dt[i] = i == ii ? NXVK_I32 : g->dt;
  return NXVK_OK;
}
