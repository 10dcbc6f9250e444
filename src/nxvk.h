/*
 * nxvk.h - the one public header of the nxvk engine.
 *
 * The front end (src/cmd_*.c) includes only this file.  The engine never
 * prints and never exits: every call returns 0 (NXVK_OK) or a negative
 * NXVK_E_* code, and nxvk_errmsg() holds a one-line detail for the calling
 * thread's last error ("a.npy: header: unknown descr '<c8'").
 *
 * Ownership: a function that returns an object through an out-pointer gives
 * the caller one reference; the matching *_free() drops it.  Freeing NULL is a
 * no-op everywhere.
 */
#ifndef NXVK_H
#define NXVK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define NXVK_VERSION "0.1.0"

/* Documented input limits (man nxvk(1), LIMITS). */
#define NXVK_MAX_RANK 8
#define NXVK_MAX_INPUTS 64                      /* operands of one op (concatenate) */
#define NXVK_MAX_ELEMENTS ((int64_t)1 << 31)    /* elements of one tensor, exclusive */
#define NXVK_MAX_NPY_HEADER (1 << 16)           /* bytes of a .npy header */
#define NXVK_MAX_GRAPH_NODES 4096
#define NXVK_MAX_JSON_DEPTH 64
#define NXVK_MAX_FILE_BYTES ((int64_t)1 << 36)  /* 64 GiB: one tensor file */
#define NXVK_MAX_GRAPH_BYTES (1 << 28)          /* 256 MiB: one graph file */

/* ------------------------------------------------------------------ errors */

/* XX(NAME, wire name, message, exit status).  The wire name is what the port
 * protocol sends as "code"; the exit status is what the CLI returns. */
#define NXVK_ERRNO_MAP(XX)                                                         \
  XX(BAD_REQUEST, "bad_request", "invalid argument", 2)                            \
  XX(BAD_FILE, "bad_file", "malformed input", 2)                                   \
  XX(IO, "io_error", "input/output error", 1)                                      \
  XX(UNKNOWN_OP, "unknown_op", "unknown op", 2)                                    \
  XX(BAD_ATTR, "bad_attr", "bad op attributes", 2)                                 \
  XX(SHAPE_MISMATCH, "shape_mismatch", "shapes do not fit the op", 2)              \
  XX(DTYPE_MISMATCH, "dtype_mismatch", "operand dtypes differ (use as_type)", 2)   \
  XX(UNSUPPORTED_DTYPE, "unsupported_dtype", "dtype not supported here", 2)        \
  XX(TOO_LARGE, "too_large", "size over a limit", 2)                               \
  XX(SIZE_MISMATCH, "size_mismatch", "byte count disagrees with dtype and shape", 2) \
  XX(UNKNOWN_HANDLE, "unknown_handle", "unknown handle", 2)                        \
  XX(ALLOC_FAILED, "alloc_failed", "device memory allocation failed", 1)           \
  XX(NO_MEMORY, "no_memory", "out of host memory", 1)                              \
  XX(UNSUPPORTED, "unsupported", "not supported by this device", 1)                \
  XX(VULKAN, "vulkan_error", "Vulkan call failed", 1)                              \
  XX(MISMATCH, "mismatch", "result outside its error limit", 1)                    \
  XX(NO_LOADER, "no_loader", "no Vulkan loader found", 3)                          \
  XX(NO_DEVICE, "no_device", "no Vulkan device", 3)                                \
  XX(DEVICE_LOST, "device_lost", "Vulkan device lost", 4)

typedef enum {
  NXVK_OK = 0,
  NXVK_E__BASE = -100,
#define NXVK_XX_ENUM(name, wire, msg, exitcode) NXVK_E_##name,
  NXVK_ERRNO_MAP(NXVK_XX_ENUM)
#undef NXVK_XX_ENUM
  NXVK_E__END
} nxvk_err;

const char *nxvk_err_name(int code);    /* "alloc_failed"; "ok" for 0 */
const char *nxvk_strerror(int code);    /* "device memory allocation failed" */
int nxvk_err_exit_status(int code);     /* CLI exit status for the code */
/* An on/off environment variable: set to anything but "" or "0". */
bool nxvk_env_flag(const char *name);
/* "1048576", "64K", "256MiB", "1.5G", "2TB" (binary multiples K M G T,
 * either case, optionally followed by iB or B; a fraction only where the
 * result is whole) -> *out; -1 for anything else or an overflow.  The size
 * grammar of every option and environment variable. */
int nxvk_parse_bytes(const char *text, uint64_t *out);
/* Small helpers every layer and front end shares (util.c): the monotonic
 * clock in nanoseconds; splitmix64, one step of the seeded stream every
 * generator of test data draws from, and a double in [0, 1) from it (53
 * bits); an ascending qsort comparator of doubles. */
double nxvk_now_ns(void);
uint64_t nxvk_splitmix64(uint64_t *state);
double nxvk_rand_unit(uint64_t *state);
int nxvk_cmp_double(const void *a, const void *b);
/* A growing text buffer (util.c): zero-initialize it, put text, read p[0..len)
 * (NUL-terminated once anything was put), free(p).  Out of memory sets oom,
 * after which puts do nothing; a caller checks oom once at the end. */
typedef struct {
  char *p;
  size_t len, cap;
  bool oom;
} nxvk_strbuf;
void nxvk_sb_put(nxvk_strbuf *b, const char *s, size_t n);
void nxvk_sb_str(nxvk_strbuf *b, const char *s);
void nxvk_sb_printf(nxvk_strbuf *b, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
const char *nxvk_errmsg(void);          /* detail of this thread's last error */

/* ------------------------------------------------------------ dtypes/shapes */

/* The first four keep their values (f32 f64 i32 u8 were the first set). */
typedef enum {
  NXVK_F32, NXVK_F64, NXVK_I32, NXVK_U8,
  NXVK_F16, NXVK_BF16, NXVK_I8, NXVK_I16, NXVK_I64, NXVK_U16, NXVK_U32, NXVK_U64, NXVK_BOOL,
  NXVK_NDTYPES
} nxvk_dtype;
#define NXVK_DT(d) (1u << (d))
#define NXVK_DT_FLOAT (NXVK_DT(NXVK_F16) | NXVK_DT(NXVK_BF16) | NXVK_DT(NXVK_F32) | NXVK_DT(NXVK_F64))
#define NXVK_DT_SINT (NXVK_DT(NXVK_I8) | NXVK_DT(NXVK_I16) | NXVK_DT(NXVK_I32) | NXVK_DT(NXVK_I64))
#define NXVK_DT_UINT (NXVK_DT(NXVK_U8) | NXVK_DT(NXVK_U16) | NXVK_DT(NXVK_U32) | NXVK_DT(NXVK_U64))
#define NXVK_DT_INT (NXVK_DT_SINT | NXVK_DT_UINT)
#define NXVK_DT_ALL (NXVK_DT_FLOAT | NXVK_DT_INT)           /* the numeric dtypes */
#define NXVK_DT_ANY (NXVK_DT_ALL | NXVK_DT(NXVK_BOOL))      /* bool too (movement, compare) */

typedef enum {
  NXVK_CLASS_FLOAT, NXVK_CLASS_SIGNED, NXVK_CLASS_UNSIGNED, NXVK_CLASS_BOOL
} nxvk_dtype_class;

/* Device features a dtype needs (nxvk_ctx_supports checks them). */
enum {
  NXVK_NEEDS_F64 = 1u << 0,       /* shaderFloat64 */
  NXVK_NEEDS_INT64 = 1u << 1,     /* shaderInt64 */
  NXVK_NEEDS_16BIT = 1u << 2,     /* storageBuffer16BitAccess */
  NXVK_NEEDS_8BIT = 1u << 3,      /* storageBuffer8BitAccess */
};

/* THE dtype table: one row per dtype, read by the parsers, the file formats,
 * the port and the shader generators (nxvk-run(1), DTYPES). */
typedef struct nxvk_dtype_info {
  const char *name;       /* "bf16": our name (CLI, JSON, graphs, port) */
  const char *alias;      /* "bfloat16": numpy's / ml_dtypes' name, also accepted */
  size_t size;            /* bytes */
  const char *npy;        /* .npy descr without byte order: "f2"; bf16: "V2" (see nxvk-run(1)) */
  const char *nx;         /* Nx type: "{:bf, 16}"; bool: "{:u, 8}" (Nx has no bool) */
  nxvk_dtype_class cls;
  int bits;
  unsigned needs;         /* NXVK_NEEDS_* */
} nxvk_dtype_info;

const nxvk_dtype_info *nxvk_dtype_info_of(nxvk_dtype d);  /* NULL when out of range */
const char *nxvk_dtype_name(nxvk_dtype d);            /* "f32" */
/* "f32", "float32", Nx's "f:32"/"bf:16"/"s:64", numpy's "<f4"/"i8"/"b1" ... */
int nxvk_dtype_parse(const char *s, nxvk_dtype *out);
size_t nxvk_dtype_size(nxvk_dtype d);
bool nxvk_dtype_is_float(nxvk_dtype d);
bool nxvk_dtype_is_int(nxvk_dtype d);                 /* signed or unsigned (not bool) */
/* The names of every dtype, space separated ("f16 bf16 f32 ..."), for messages. */
const char *nxvk_dtype_names(void);

/* f16 / bf16 bits <-> f32: to f32 is exact; from f32 rounds to nearest,
 * ties to even, overflow to inf, subnormals kept, NaN stays NaN with its
 * sign and the payload bits that fit (quiet bit set). */
float nxvk_f16_to_f32(uint16_t h);
uint16_t nxvk_f32_to_f16(float f);
float nxvk_bf16_to_f32(uint16_t h);
uint16_t nxvk_f32_to_bf16(float f);

typedef struct nxvk_shape {
  int rank;                       /* 0..NXVK_MAX_RANK */
  int64_t dim[NXVK_MAX_RANK];     /* each >= 0 */
} nxvk_shape;

/* Element count with overflow and NXVK_MAX_ELEMENTS checks (NXVK_E_TOO_LARGE). */
int nxvk_shape_count(const nxvk_shape *s, int64_t *count);
bool nxvk_shape_equal(const nxvk_shape *a, const nxvk_shape *b);
/* "[2,3,4]" into buf; returns buf. */
char *nxvk_shape_str(const nxvk_shape *s, char *buf, size_t len);

/* dtype + shape: what shape rules compute without touching data. */
typedef struct nxvk_meta {
  nxvk_dtype dtype;
  nxvk_shape shape;
} nxvk_meta;

/* A tensor in host memory.  data is always owned (malloc) and holds
 * count * dtype size bytes, little-endian, C order; NULL when count is 0. */
typedef struct nxvk_host {
  nxvk_dtype dtype;
  nxvk_shape shape;
  void *data;
} nxvk_host;

int nxvk_host_alloc(nxvk_host *h, nxvk_dtype d, const nxvk_shape *s); /* zero-filled */
void nxvk_host_free(nxvk_host *h);                                     /* data freed, h zeroed */
int64_t nxvk_host_count(const nxvk_host *h);
size_t nxvk_host_bytes(const nxvk_host *h);
/* Element i as double / written from double (f16 and bf16 round to nearest
 * even; integers convert as as_type does: NaN -> 0, saturating; bool is
 * v != 0).  i64 and u64 above 2^53 lose bits here: use the _int forms. */
double nxvk_host_get(const nxvk_host *h, int64_t i);
void nxvk_host_set(nxvk_host *h, int64_t i, double v);
/* Integer elements exactly: the value as int64 (u64 as its bit pattern);
 * set wraps to the dtype (two's complement).  Floats convert. */
int64_t nxvk_host_get_int(const nxvk_host *h, int64_t i);
void nxvk_host_set_int(nxvk_host *h, int64_t i, int64_t v);

/* ------------------------------------------------------------ tensor files */

/* .npy read: versions 1.0 2.0 3.0; descr <f4 <f8 <i4 |u1 |b1 and > variants;
 * fortran_order transposed to C order.  `name` is used in error messages. */
int nxvk_npy_read(const char *path, nxvk_host *out);
int nxvk_npy_read_mem(const void *buf, size_t len, const char *name, nxvk_host *out);
/* .npy write (1.0, 2.0 when the header needs it) to a temp file renamed into
 * place, so a failure leaves no partial file. */
int nxvk_npy_write(const char *path, const nxvk_host *t);
/* Encoded .npy in memory (malloc'd). */
int nxvk_npy_encode(const nxvk_host *t, void **buf, size_t *len);

/* Inline JSON tensor: {"dtype":"f32","shape":[2],"data":[1,"nan"]}.
 * "nan" "inf" "-inf" "-0" stand for values JSON cannot hold; data may be
 * nested lists matching shape or flat. */
int nxvk_json_tensor_parse(const char *text, size_t len, const char *name, nxvk_host *out);
/* The same form back (malloc'd NUL-terminated string). */
int nxvk_json_tensor_format(const nxvk_host *t, char **out);
/* For people, as numpy prints a big array: every axis longer than 2 * edge
 * shows edge entries at each end around "..." (so not JSON). */
int nxvk_json_tensor_summary(const nxvk_host *t, int edge, char **out);

/* Whether JSON text nests brackets at most max_depth deep (the documented
 * limit is NXVK_MAX_JSON_DEPTH), found without recursion, so hostile
 * "[[[[..." never reaches a recursive parser. */
bool nxvk_json_depth_ok(const char *text, size_t len, int max_depth);

/* CSV: a 2-D table of numbers, rows of equal length, read with libcsv. */
int nxvk_csv_read(const char *path, nxvk_dtype dtype, nxvk_host *out);

/* ------------------------------------------------------------------ outputs */

/* Every file nxvk writes goes through an nxvk_out (src/io/out.c).  A regular
 * file, or a path where nothing is yet, is replaced atomically: the bytes go
 * to a mkstemp temporary in the same folder, fsync'd, and nxvk_out_commit
 * renames it over the path; nxvk_out_abort removes it, so a failure leaves
 * the old file.  A symbolic link is followed and its target replaced (a link
 * to nothing is refused).  Anything else -- a character device, a FIFO, "-"
 * (stdout), a name of our own stdout or stderr such as /dev/stdout -- is
 * written in place and its write errors are reported.  A directory at the
 * path is NXVK_E_BAD_REQUEST.  NXVK_OUT_REPLACE (the caches): follow nothing,
 * write nothing in place, replace whatever is at the path. */
typedef struct nxvk_out nxvk_out;
enum { NXVK_OUT_REPLACE = 1u };
/* What the path names, without opening anything: *dest (malloc'd) is the
 * file that will be replaced or written ("-" for stdout), so two outputs
 * with one dest clash. */
int nxvk_out_resolve(const char *path, unsigned flags, char **dest, bool *in_place);
int nxvk_out_open(const char *path, unsigned flags, nxvk_out **out);
int nxvk_out_write(nxvk_out *o, const void *buf, size_t len);
int nxvk_out_printf(nxvk_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
FILE *nxvk_out_stream(nxvk_out *o);  /* for fprintf-style writers; errors seen at finish */
const char *nxvk_out_path(const nxvk_out *o);
const char *nxvk_out_dest(const nxvk_out *o);
/* Flush (and fsync a temporary); the first write error as NXVK_E_IO. */
int nxvk_out_finish(nxvk_out *o);
/* Finish, rename into place, free o (also on error). */
int nxvk_out_commit(nxvk_out *o);
/* Remove the temporary, free o; NULL is a no-op. */
void nxvk_out_abort(nxvk_out *o);
/* Open, write len bytes, commit. */
int nxvk_out_write_file(const char *path, unsigned flags, const void *buf, size_t len);

/* Output formats: chosen by the extension (case-insensitive) or --format. */
typedef enum { NXVK_FMT_NONE, NXVK_FMT_NPY, NXVK_FMT_CSV, NXVK_FMT_JSON, NXVK_FMT_NPZ } nxvk_format;
nxvk_format nxvk_format_of_path(const char *path); /* NXVK_FMT_NONE: unknown */
int nxvk_format_parse(const char *name, nxvk_format *out); /* "npy" "csv" "json" "npz" */
const char *nxvk_format_name(nxvk_format f);
/* One tensor: .npy; .csv as numpy.savetxt (rank <= 2); .json as the inline
 * form; .npz as numpy.savez(file, t) (member arr_0). */
int nxvk_tensor_save(nxvk_out *o, nxvk_format f, const nxvk_host *t);
/* Several named tensors as numpy.savez writes them (stored members NAME.npy). */
int nxvk_npz_save(nxvk_out *o, int n, const char *const *names, const nxvk_host *const *ts);

/* .npz: the arrays of a zip of NAME.npy members (stored or deflated, zip64
 * as numpy writes it), in the zip's order; names without ".npy". */
typedef struct nxvk_npz {
  int n;
  char **names;
  nxvk_host *host;
} nxvk_npz;
int nxvk_npz_read_mem(const void *buf, size_t len, const char *name, nxvk_npz *out);
void nxvk_npz_free(nxvk_npz *z);

/* Load a tensor named on a command line: *.npy, *.npz, *.csv, inline JSON
 * text (starts with '{'), or "-" for stdin; a pipe, FIFO or /dev/stdin is
 * read once.  Without a known extension the first bytes tell .npy or .npz;
 * a regular file that is neither is refused, a stream is read as CSV. */
typedef struct nxvk_load_opts {
  nxvk_dtype csv_dtype; /* NXVK_F32 when zeroed */
  int csv_header;       /* 1: the first row is a header; 0: detected (a first row with no number) */
  const char *npz_member; /* an .npz: this member; NULL: the file must hold exactly one */
} nxvk_load_opts;
int nxvk_tensor_load(const char *arg, nxvk_dtype csv_dtype, nxvk_host *out);
int nxvk_tensor_load_opts(const char *arg, const nxvk_load_opts *o, nxvk_host *out);
/* Every tensor of arg (an .npz gives each member, in order), at most max;
 * *n counts those stored in out[0..). */
int nxvk_tensor_load_all(const char *arg, const nxvk_load_opts *o, nxvk_host *out, int max, int *n);

/* ------------------------------------------------------------------ devices */

typedef struct nxvk_heap_info {
  uint64_t size;
  uint64_t budget;          /* VK_EXT_memory_budget; 0 when has_budget is false */
  uint64_t usage;
  bool device_local;
} nxvk_heap_info;

typedef struct nxvk_device_info {
  int index;
  char name[256];
  uint32_t vendor_id, device_id;
  const char *vendor;               /* "NVIDIA", "AMD", "Intel", "Mesa", ... */
  const char *type;                 /* "discrete" "integrated" "virtual" "cpu" "other" */
  char driver_name[256];
  char driver_info[256];
  char driver_version[64];          /* decoded per vendor */
  uint32_t driver_version_raw;
  char api_version[32];
  uint32_t api_version_raw;
  uint8_t pipeline_cache_uuid[16];

  int heap_count;
  nxvk_heap_info heaps[16];
  bool has_budget;

  /* limits */
  uint32_t max_workgroup_size[3];
  uint32_t max_workgroup_invocations;
  uint32_t max_workgroup_count[3];
  uint32_t max_shared_memory;
  uint32_t max_push_constants;
  uint64_t max_storage_buffer_range;
  uint64_t max_allocation_size;
  uint32_t subgroup_size, min_subgroup_size, max_subgroup_size;
  bool subgroup_ballot;             /* basic and ballot subgroup operations in compute shaders */
  bool subgroup_shuffle;            /* basic, vote, shuffle and relative-shuffle subgroup operations in compute shaders */
  uint32_t compute_units;           /* SMs (NVIDIA) or CUs (AMD); 0 = not reported */
  float timestamp_period_ns;
  uint32_t timestamp_valid_bits;    /* of the compute queue; 0 = no timestamps */

  /* features */
  bool f64, f16, int64, int16, int8;
  bool storage_8bit, storage_16bit;
  bool timestamps;
  bool push_descriptor;
  bool timeline_semaphore;         /* Vulkan 1.2 timelineSemaphore: submissions batched */

  /* float controls (VkPhysicalDeviceFloatControlsProperties) */
  bool float_controls;
  bool denorm_preserve_f32, denorm_preserve_f64;
  bool denorm_flush_f32, denorm_flush_f64;
  bool signed_zero_inf_nan_f32, signed_zero_inf_nan_f64;
  /* f16: what the driver's own f32 <-> f16 conversions need to be exact
   * (round to nearest even, subnormals kept; NXVK_F16_CVT) */
  bool denorm_preserve_f16, denorm_flush_f16, rte_f16, signed_zero_inf_nan_f16;

  bool vulkan_memory_model;         /* VkPhysicalDeviceVulkanMemoryModelFeatures */
  /* scatter adds (indexed_add): shaderBufferFloat32AtomicAdd of
   * VK_EXT_shader_atomic_float, shaderBufferInt64Atomics (with shaderInt64) */
  bool atomic_f32_add, atomic_i64;

  /* cooperative matrix */
  bool coop_matrix_nv, coop_matrix_khr;   /* the extensions are present */
  /* what dot's "coopmat" variant needs for f16 (and f32) inputs: Vulkan
   * 1.2, shaderFloat16, vulkanMemoryModel and either extension's feature
   * with an f16 x f16 -> f32 subgroup configuration it lists (NV: coopmat_nv_f16;
   * KHR: coopmat_khr_f16 below).  conv's tensor-core kernel and int8's peak
   * take the NV form only. */
  bool coopmat_f16_f32, coopmat_nv_f16;
  /* every VK_NV_cooperative_matrix configuration the device lists, as
   * "A x B + C -> D MxNxK" joined by ", " (subgroup scope unless marked);
   * empty where the feature is off or nothing is listed */
  char coop_shapes[1024];
  /* the subgroup-scope configurations as MxNxK, for the kernels that pick
   * their fragments from them: f16 x f16 + f32 -> f32 (dot's coopmat, bench
   * peak) and s8 x s8 + s32 -> s32 (bench peak), as listed */
  uint32_t coop_f16_shapes[8][3], coop_s8_shapes[8][3];
  int coop_f16_nshapes, coop_s8_nshapes;
  /* bf16 on tensor cores: VK_KHR_cooperative_matrix and VK_KHR_shader_bfloat16
   * with their features (cooperativeMatrix, shaderBFloat16Type,
   * shaderBFloat16CooperativeMatrix), vulkanMemoryModel and a bf16 x bf16 +
   * f32 -> f32 subgroup configuration the device lists (VK_KHR_cooperative_matrix's
   * list, as MxNxK in coop_bf16_shapes).  The kernels are written against
   * GL_NV_cooperative_matrix and their SPIR-V rewritten (spirv_khr.c):
   * glslang 12 knows neither GL_KHR_cooperative_matrix nor GL_EXT_bfloat16. */
  bool coopmat_bf16_f32;
  uint32_t coop_bf16_shapes[8][3];
  int coop_bf16_nshapes;
  /* the f16 kernels may run as KHR cooperative matrices too (the same
   * rewrite without bf16): the KHR feature, the memory model and an f16 x
   * f16 + f32 -> f32 subgroup configuration in the KHR list; on NVIDIA their
   * multiply-adds run faster than the NV extension's (bench/NOTES.md), and
   * a device with only the KHR extension (AMD, Intel, Mesa) runs them so */
  bool coopmat_khr_f16;

  /* identity (VkPhysicalDeviceIDProperties, VkPhysicalDeviceDriverProperties) */
  bool has_ids;                     /* Vulkan 1.1: the UUIDs below are set */
  uint8_t device_uuid[16], driver_uuid[16];
  uint32_t driver_id;               /* VkDriverId; 0 = not reported */
  const char *driver_id_name;       /* "NVIDIA_PROPRIETARY", "MESA_LLVMPIPE", ...; "" = none */
  char conformance_version[24];     /* "1.3.1.1" (CTS passed); "" = not reported */
  /* queue families */
  int queue_family_count;
  struct {
    uint32_t flags;                 /* VkQueueFlags */
    uint32_t count, timestamp_valid_bits;
  } queue_families[16];
  /* memory types */
  int memory_type_count;
  struct {
    uint32_t flags;                 /* VkMemoryPropertyFlags */
    uint32_t heap;
  } memory_types[32];
  /* device extensions, names separated by one space */
  int extension_count;
  char extensions[12288];
} nxvk_device_info;

typedef struct nxvk_instance_opts {
  bool validate;                    /* enable VK_LAYER_KHRONOS_validation */
} nxvk_instance_opts;

/* All devices (for `nxvk info`).  *infos is malloc'd; free with free(). */
int nxvk_devices_query(const nxvk_instance_opts *o, nxvk_device_info **infos, int *count);

/* ---------------------------------------------------------------- context */

typedef struct nxvk_ctx nxvk_ctx;

typedef struct nxvk_ctx_opts {
  const char *device;               /* "N" or a name substring; NULL: default order */
  bool validate;
  /* On-disk caches (nxvk-run(1), FILES): fused kernels' SPIR-V and the
   * VkPipelineCache, loaded at open and saved at close. */
  bool no_cache;                    /* never read or write them (also NXVK_NO_CACHE=1) */
  const char *cache_dir;            /* NULL: $NXVK_CACHE_DIR, $XDG_CACHE_HOME/nxvk, ~/.cache/nxvk */
} nxvk_ctx_opts;

/* Open the chosen device.  Default: first discrete GPU, then integrated,
 * virtual, CPU. */
int nxvk_ctx_open(const nxvk_ctx_opts *o, nxvk_ctx **out);
void nxvk_ctx_close(nxvk_ctx *c);
/* Where the context's caches are and what became of the pipeline cache
 * file when it opened ("PATH: loaded N bytes", "...: corrupt (checksum
 * mismatch), ignored", "off"). */
typedef struct nxvk_cache_info {
  bool enabled;
  char dir[4096];
  char pipeline_cache[320];
} nxvk_cache_info;
void nxvk_ctx_cache_info(nxvk_ctx *c, nxvk_cache_info *out);
/* Device info, with memory budget/usage read now. */
int nxvk_ctx_device_info(nxvk_ctx *c, nxvk_device_info *out);
bool nxvk_ctx_supports(nxvk_ctx *c, nxvk_dtype d);
/* The device feature dtype d needs and dev lacks ("shaderInt64"); NULL when
 * dev computes d. */
const char *nxvk_dtype_missing(const nxvk_device_info *dev, nxvk_dtype d);

typedef struct nxvk_stats {
  uint64_t live_tensors;                 /* nxvk_tensor objects not yet freed */
  uint64_t live_bytes, live_buffers;     /* device buffers alive now (tensors,
                                            staging, the recording pool's own;
                                            not the lookup tables it keeps) */
  uint64_t peak_bytes;
  uint64_t pooled_bytes;                 /* freed buffers kept for reuse */
  uint64_t buffers_created;              /* VkBuffer objects ever created */
  uint64_t pipelines_created;            /* VkPipeline objects ever created */
  uint64_t submits;
  uint64_t imported_bytes;               /* transferred straight from/to imported host memory */
  uint64_t import_failures;              /* imports refused (those bytes went through staging) */
  uint64_t pinned_bytes;                 /* transferred from/to pinned host memory (nxvk_pinned_alloc) */
  uint64_t validation_messages;          /* validation-layer errors/warnings seen */
  /* recordings submitted, and the time they spent in each stage, summed
   * over threads (ns): recording (begin to submit), submitting (end, the
   * group's turn, vkQueueSubmit), waiting for the device, releasing
   * (resets); queue_submit_ns sums the vkQueueSubmit calls alone (submits
   * of them) */
  uint64_t recordings;
  uint64_t record_ns, submit_ns, wait_ns, release_ns, queue_submit_ns;
} nxvk_stats;
void nxvk_ctx_stats(nxvk_ctx *c, nxvk_stats *out);
/* A cap on the device buffers alive at once (live_bytes, staging included;
 * not the engine's own lookup tables, as not its pipelines):
 * a buffer that would pass it is refused with NXVK_E_ALLOC_FAILED before the
 * driver is asked.  0: none (the default).  The port's --max-bytes. */
void nxvk_ctx_set_mem_cap(nxvk_ctx *c, uint64_t bytes);
/* One line per kernel built so far: its name, specialization constants and,
 * when the context was opened with NXVK_KERNEL_STATS=1 on a driver with
 * VK_KHR_pipeline_executable_properties, the driver's statistics
 * (registers and the like).  *text is malloc'd. */
int nxvk_kernel_stats_report(nxvk_ctx *c, char **text);
/* Give the buffer pool's memory back to the driver (stats.pooled_bytes -> 0). */
void nxvk_ctx_trim(nxvk_ctx *c);
/* Device loss: set on VK_ERROR_DEVICE_LOST; every later call answers
 * NXVK_E_DEVICE_LOST.  nxvk_ctx_mark_lost() simulates it (port tests). */
bool nxvk_ctx_lost(nxvk_ctx *c);
void nxvk_ctx_mark_lost(nxvk_ctx *c);

/* Test-only faults, read from NXVK_TEST_INJECT when a context opens
 * (comma-separated): "leak" (freed tensors keep their device memory),
 * "unlocked_submit" (vkQueueSubmit without the queue lock), "break_op:NAME"
 * (op NAME's GPU result gets one wrong element).  They exist so the tests can
 * prove that stress and conformance catch each fault. */

/* The last validation message (for test failures); "" when none. */
void nxvk_ctx_last_validation(nxvk_ctx *c, char *buf, size_t len);

/* ------------------------------------------------------------ GPU tensors */

typedef struct nxvk_tensor nxvk_tensor;

int nxvk_tensor_new(nxvk_ctx *c, nxvk_dtype d, const nxvk_shape *s, nxvk_tensor **out);
int nxvk_tensor_upload(nxvk_ctx *c, nxvk_tensor *t, const void *data, size_t bytes);
int nxvk_tensor_download(nxvk_ctx *c, const nxvk_tensor *t, void *data, size_t bytes);
int nxvk_tensor_from_host(nxvk_ctx *c, const nxvk_host *h, nxvk_tensor **out);
int nxvk_tensor_to_host(nxvk_ctx *c, const nxvk_tensor *t, nxvk_host *out);
/* A new tensor sharing t's memory under another shape (same count). */
int nxvk_tensor_view(const nxvk_tensor *t, const nxvk_shape *s, nxvk_tensor **out);
void nxvk_tensor_free(nxvk_tensor *t);
nxvk_dtype nxvk_tensor_dtype(const nxvk_tensor *t);
const nxvk_shape *nxvk_tensor_shape(const nxvk_tensor *t);
int64_t nxvk_tensor_count(const nxvk_tensor *t);

/* Pinned host memory: n bytes of host memory (host-visible, coherent,
 * cached where the device has such) that the device reaches by DMA, so
 * nxvk_tensor_upload / nxvk_tensor_download from or into any part of it are
 * the device's copy alone, with no memcpy through staging (PyTorch's
 * pin_memory).  Free it with nxvk_pinned_free before the context closes
 * (close frees what is left); keep it alive while transfers use it. */
int nxvk_pinned_alloc(nxvk_ctx *c, size_t n, void **out);
void nxvk_pinned_free(nxvk_ctx *c, void *p);
/* The same for the caller's memory [p, p + n) (a long-lived mapping, such
 * as a shared-memory object), imported once with VK_EXT_external_memory_host:
 * its part aligned to minImportedHostPointerAlignment at both ends moves by
 * DMA, the rest as any host memory.  NXVK_E_UNSUPPORTED where the device
 * has no such import; the memory must stay mapped until
 * nxvk_host_unregister(c, p). */
int nxvk_host_register(nxvk_ctx *c, void *p, size_t n);
void nxvk_host_unregister(nxvk_ctx *c, void *p);
/* memcpy on the transfer threads (NXVK_XFER_THREADS, NXVK_XFER_COPY): how
 * fast host memory fills pinned memory (bench transfers' memcpy rows). */
int nxvk_host_copy(nxvk_ctx *c, void *dst, const void *src, size_t n);

/* -------------------------------------------------------------- op table */

typedef enum {
  NXVK_KIND_UNARY,      /* elementwise, one input */
  NXVK_KIND_BINARY,     /* elementwise, two inputs, numpy broadcasting */
  NXVK_KIND_COMPARE,    /* binary giving u8 */
  NXVK_KIND_SELECT,     /* select(pred, a, b) with broadcasting */
  NXVK_KIND_REDUCE,     /* over axes */
  NXVK_KIND_DOT,
  NXVK_KIND_MOVEMENT,   /* reshape transpose slice concatenate as_type */
  NXVK_KIND_SOURCE,     /* no inputs: iota random_* */
  NXVK_KIND_SORT,       /* sort argsort top_k top_k_indices along one axis */
  NXVK_KIND_SCAN,       /* cumulative_* along one axis */
  NXVK_KIND_WINDOW,     /* window_* and window_scatter_* */
  NXVK_KIND_CONV,       /* conv (Nx.conv / XLA ConvGeneralDilated) */
  NXVK_KIND_LINALG,     /* cholesky triangular_solve: batched square matrices */
  NXVK_KIND_INDEX,      /* integer index operands beside the data: gather take scatter */
} nxvk_kind;

/* Attributes an op may accept. */
enum {
  NXVK_ATTR_AXES = 1u << 0,      /* "axes": [int...] (absent: all) */
  NXVK_ATTR_KEEP_AXES = 1u << 1, /* "keep_axes": bool */
  NXVK_ATTR_PERM = 1u << 2,      /* "perm": [int...] */
  NXVK_ATTR_SLICE = 1u << 3,     /* "start" "length" "stride": [int...] */
  NXVK_ATTR_AXIS = 1u << 4,      /* "axis": int */
  NXVK_ATTR_SHAPE = 1u << 5,     /* "shape": [int...] */
  NXVK_ATTR_DTYPE = 1u << 6,     /* "dtype": "f32" */
  NXVK_ATTR_SEED = 1u << 7,      /* "seed": int (0..2^53, or decimal string up to 2^64-1) */
  NXVK_ATTR_VARIANT = 1u << 8,   /* "variant": kernel variant name (dot) */
  NXVK_ATTR_REVERSE = 1u << 16,  /* "reverse": bool (scans) */
  NXVK_ATTR_DIRECTION = 1u << 17, /* "direction": "asc" | "desc" (sort argsort) */
  NXVK_ATTR_K = 1u << 18,        /* "k": int >= 1 (top_k) */
  NXVK_ATTR_WINDOW = 1u << 19,   /* "window_dimensions" "strides" "padding" "window_dilations" */
  NXVK_ATTR_CONV = 1u << 9,      /* conv: "strides" "padding" "input_dilation" "kernel_dilation"
                                  * "feature_group_size" "batch_group_size" "input_permutation"
                                  * "kernel_permutation" "output_permutation" */
  NXVK_ATTR_TRIANGULAR = 1u << 10, /* triangular_solve: "left_side" "lower" "transform_a" */
  NXVK_ATTR_PAD = 1u << 20,      /* "low" "high" "interior": [int...] (pad) */
  NXVK_ATTR_TIE_BREAK = 1u << 24,/* "tie_break": "low" (default) or "high" (argmax, argmin) */
};

/* conv's attributes (nxvk-run(1), CONV); per spatial axis unless noted. */
typedef struct nxvk_conv_attrs {
  int nstrides, nidil, nkdil, npad;
  int64_t strides[NXVK_MAX_RANK], idil[NXVK_MAX_RANK], kdil[NXVK_MAX_RANK];
  int pad_mode;                    /* NXVK_PAD_* */
  int64_t pad_lo[NXVK_MAX_RANK], pad_hi[NXVK_MAX_RANK];
  int64_t feature_groups, batch_groups; /* 0 = 1 */
  int nperm_in, nperm_kernel, nperm_out; /* whole-rank permutations; 0 = identity */
  int perm_in[NXVK_MAX_RANK], perm_kernel[NXVK_MAX_RANK], perm_out[NXVK_MAX_RANK];
} nxvk_conv_attrs;
enum { NXVK_PAD_VALID, NXVK_PAD_SAME, NXVK_PAD_EXPLICIT };

typedef struct nxvk_op_desc {
  const char *name;
  nxvk_kind kind;
  int arity;             /* number of inputs; -1 = one or more */
  unsigned dtypes;       /* NXVK_DT() mask of accepted input dtypes */
  unsigned attrs;        /* NXVK_ATTR_* accepted */
  const char *expr;      /* elementwise GLSL expression over a, b, c; else NULL */
  const char *summary;
} nxvk_op_desc;

int nxvk_op_count(void);
/* Kernel variants of an op ("tiled", "naive" for dot); the first is the
 * default.  Returns how many (0 for ops with one kernel). */
int nxvk_op_variants(const nxvk_op_desc *op, const char *const **names);
const nxvk_op_desc *nxvk_op_at(int i);
const nxvk_op_desc *nxvk_op_find(const char *name);   /* NULL: unknown */

typedef struct nxvk_attrs {
  unsigned set;                    /* NXVK_ATTR_* present */
  int naxes;
  int axes[NXVK_MAX_RANK];
  bool keep_axes;
  int nperm;
  int perm[NXVK_MAX_RANK];
  int nslice;
  int64_t start[NXVK_MAX_RANK], length[NXVK_MAX_RANK], stride[NXVK_MAX_RANK];
  int axis;
  nxvk_shape shape;
  nxvk_dtype dtype;
  uint64_t seed;
  char variant[16];                /* "" = the op's default */
  bool reverse;                    /* scans: from the end of the axis */
  bool descending;                 /* sort argsort: "direction": "desc" */
  int64_t k;                       /* top_k (0: absent, 1) */
  /* windows (Nx's window_* options); absent strides and dilations are 1s,
   * absent padding "valid"; nwin is the rank the dimensions were given for */
  int nwin, nwstrides, nwdil, npad;
  int64_t window[NXVK_MAX_RANK], wstrides[NXVK_MAX_RANK], wdil[NXVK_MAX_RANK];
  int wpad_mode;                   /* 0 valid, 1 same, 2 explicit pairs */
  int64_t wpad_lo[NXVK_MAX_RANK], wpad_hi[NXVK_MAX_RANK];
  nxvk_conv_attrs conv;
  /* triangular_solve, stored so that zero is Nx's default: "left_side"
   * (true) is !right_side, "lower" (true) is !upper, "transform_a"
   * ("none" or "transpose") */
  bool right_side, upper, transpose_a;
  int nlow;                        /* pad: entries of low / high / interior */
  int64_t low[NXVK_MAX_RANK], high[NXVK_MAX_RANK], interior[NXVK_MAX_RANK];
  bool tie_high;                   /* tie_break "high": the last of equal extremes */
} nxvk_attrs;

/* Parse a JSON object of attributes for op (NULL/empty text = none).  Unknown
 * keys and wrong types are NXVK_E_BAD_ATTR naming the key. */
int nxvk_attrs_parse(const nxvk_op_desc *op, const char *json, nxvk_attrs *out);

/* Shape and dtype rule: the output of op on inputs of the given metas. */
int nxvk_op_infer(const nxvk_op_desc *op, const nxvk_attrs *a, const nxvk_meta *in, int nin,
                  nxvk_meta *out);

/* Whether the context's device runs op with these attributes on operands
 * of these metas (shapes are not checked: nxvk_op_infer does that):
 * NXVK_OK, NXVK_E_UNSUPPORTED_DTYPE (the device, or the chosen kernel
 * variant, does not compute a dtype) or NXVK_E_UNSUPPORTED (the variant
 * needs a device feature this device lacks), with the reason in
 * nxvk_errmsg().  conformance and bench count such cases as skipped. */
int nxvk_op_supported(nxvk_ctx *c, const nxvk_op_desc *op, const nxvk_attrs *a,
                      const nxvk_meta *in, int nin);

/* CPU reference: computes out (allocated here).  f32 results are computed in
 * wider precision and rounded once. */
int nxvk_op_ref(const nxvk_op_desc *op, const nxvk_attrs *a, const nxvk_host *in, int nin,
                nxvk_host *out);

/* One op on the GPU: records, submits, waits.  *out is a new tensor. */
int nxvk_op_run(nxvk_ctx *c, const nxvk_op_desc *op, const nxvk_attrs *a,
                nxvk_tensor *const *in, int nin, nxvk_tensor **out);

/* One op from host tensors to a host tensor in ONE submission: inputs are
 * written into the command buffer (or through staging), the op runs, the
 * result is copied back, and *out is allocated here.  What the port's and the
 * benchmark's end-to-end paths use: one round trip to the device, not three. */
int nxvk_op_run_host(nxvk_ctx *c, const nxvk_op_desc *op, const nxvk_attrs *a,
                     const nxvk_host *in, int nin, nxvk_host *out);

/* Several ops in one command buffer (graphs, benchmarks). */
typedef struct nxvk_batch nxvk_batch;
enum { NXVK_BATCH_TIMESTAMPS = 1u << 0 };
int nxvk_batch_begin(nxvk_ctx *c, unsigned flags, nxvk_batch **out);
int nxvk_batch_op(nxvk_batch *b, const nxvk_op_desc *op, const nxvk_attrs *a,
                  nxvk_tensor *const *in, int nin, nxvk_tensor **out);
/* Submit and wait; *gpu_ns (may be NULL) gets the GPU time between the
 * first and last recorded op when NXVK_BATCH_TIMESTAMPS was given.  The
 * batch is released either way. */
int nxvk_batch_submit(nxvk_batch *b, double *gpu_ns);
void nxvk_batch_abort(nxvk_batch *b);

/* ------------------------------------------------------- measurements */

/* For `nxvk bench peak`: kernels that are not ops (the FMA-rate kernels
 * peak_fma_*), and a timed device copy.  One dispatch of an embedded kernel
 * over the given tensors (binding 1..nbufs), timed with GPU timestamps. */
#define NXVK_HAVE_BENCH_KERNELS 1
int nxvk_bench_kernel(nxvk_ctx *c, const char *kernel, const uint32_t *spec, int nspec,
                      const uint32_t *meta, uint32_t nmeta, nxvk_tensor *const *bufs, int nbufs,
                      uint32_t groups, double *gpu_ns);
/* For `nxvk bench matmul`: the zero-padded f16 copies dot's coopmat
 * variant makes of f32 A [m,k] and B [k,n] (f16_pack): padded rows and
 * columns {Mp, Kp, Np}; false where the device has no coopmat. */
bool nxvk_dot_coopmat_padding(nxvk_ctx *c, uint32_t m, uint32_t k, uint32_t n, uint32_t padded[3]);
/* For `nxvk bench matmul --sweep`: read the tuning variables (NXVK_DOT_*
 * and the others nxvk_ctx_open reads) again, checked as at open; on an
 * error the context keeps its tuning.  Not safe while other threads run
 * work on the context. */
int nxvk_ctx_retune(nxvk_ctx *c);
/* Whether the tensor-core kernels for f16 (bf16 false) or bf16 inputs run
 * as VK_KHR_cooperative_matrix kernels on this context: bf16 always where
 * the device has them, f16 where nxvk info says "(as KHR)" unless
 * NXVK_COOPMAT_KHR=0 on a device that has the NV extension's too. */
bool nxvk_coopmat_khr(const nxvk_ctx *c, bool bf16);
/* dst = src (same byte size) on the device, timed. */
int nxvk_tensor_copy(nxvk_ctx *c, nxvk_tensor *dst, const nxvk_tensor *src, double *gpu_ns);

/* ------------------------------------------------------- error limits */

/* How far a GPU result may be from the reference (conformance/limits.json,
 * embedded).  Checked in this order: exact; sum_factor (reductions and dot:
 * |got-ref| <= factor * n * eps * scale, scale = the reference on |inputs|);
 * abs inside [lo, hi] of input 1; outside_unbounded (the Vulkan spec gives
 * no bound outside the range: only |got| <= 1 and the class are checked);
 * else ulps + ulps_per_arg * |arg| + ulps_per_y * |input 2| where arg is
 * input 1, or y*log2|x| for pow-like limits. */
typedef struct nxvk_limit {
  bool exact;
  double ulps, ulps_per_arg, ulps_per_y;
  bool arg_pow;
  double abs, lo, hi;
  bool outside_unbounded;
  double sum_factor;
  double norm_factor;            /* linalg: |got-ref| <= factor * n * eps * max|ref| of its matrix */
  double y_abs_lo, y_abs_hi;     /* hi > 0: the bound holds only for |input 2| in [lo, hi] */
  char text[96];                 /* the limit as a person reads it */
} nxvk_limit;

/* The op's limit for a dtype (NXVK_E_UNSUPPORTED when none is recorded). */
int nxvk_op_limit(const nxvk_op_desc *op, nxvk_dtype d, nxvk_limit *out);

/* Distance in units in the last place between two values of dtype d
 * (0 when bit-equal or both NaN; INFINITY across classes: NaN vs number,
 * different infinities, or zeros of different sign). */
double nxvk_ulp_diff(nxvk_dtype d, double got, double ref);
/* Spacing of dtype d's values at x (denormal spacing below the normals;
 * the spacing at the largest finite value for infinities and NaN). */
double nxvk_ulp(nxvk_dtype d, double x);

typedef struct nxvk_cmp {
  int64_t n;                     /* elements compared */
  int64_t bad;                   /* over the limit */
  int64_t forgiven;              /* denormal flushes forgiven (counted, not hidden) */
  int64_t unbounded;             /* outside the range the spec bounds (counted) */
  double max_abs, max_ulp;       /* over finite pairs */
  int64_t worst;                 /* index of the first element over the limit, else of max ulp; -1 */
  double worst_got, worst_ref;
} nxvk_cmp;

/* Compare an op's GPU output with its reference.  ref_flushed (may be NULL)
 * is the reference computed on inputs with denormals flushed to zero: where
 * the device may flush, a result matching it (or a flushed result) is
 * forgiven and counted. */
int nxvk_compare(const nxvk_op_desc *op, const nxvk_attrs *a, const nxvk_host *in, int nin,
                 const nxvk_host *got, const nxvk_host *ref, const nxvk_host *ref_flushed,
                 nxvk_cmp *out);

/* The dtypes (NXVK_DT mask) whose denormals the device may flush: its float
 * controls do not promise to preserve them.  The one statement of that
 * rule; every check of a GPU result takes it from here. */
unsigned nxvk_flush_dtypes(const nxvk_device_info *dev);
/* A copy of h with its float denormals flushed to zeros of the same sign;
 * *had says whether there were any. */
int nxvk_host_flush_denormals(const nxvk_host *h, nxvk_host *out, bool *had);

/* The whole check of a GPU result: computes the reference, and where the
 * device may flush denormals (its float controls do not promise to preserve
 * them) also accepts what flushing gives: any subset of the inputs'
 * denormals, or the result (also when it rounds up to the smallest normal).
 * `run --check`, conformance, stress and bench judge through here. */
int nxvk_check(const nxvk_device_info *dev, const nxvk_op_desc *op, const nxvk_attrs *a,
               const nxvk_host *in, int nin, const nxvk_host *got,
               const nxvk_host *ref /* NULL: computed here */, nxvk_cmp *out);

/* ------------------------------------------------------------ graphs */

/* A graph file (nxvk-run(1)): named inputs, ops naming inputs or earlier
 * outputs, and the outputs to keep.  Value ids: inputs are 0..ninputs-1,
 * op i's result is ninputs + i. */
typedef struct nxvk_graph nxvk_graph;

typedef enum {
  NXVK_GRAPH_IN_FILE,     /* "x": "x.npy" (path resolved against the graph's folder) */
  NXVK_GRAPH_IN_INLINE,   /* "x": {"dtype": ..., "shape": ..., "data": ...} */
  NXVK_GRAPH_IN_HANDLE,   /* "x": {"handle": N} (port) */
} nxvk_graph_input_kind;

/* origin: the graph file's path (for messages and relative paths), or a
 * label such as "request 7". */
int nxvk_graph_parse(const char *text, size_t len, const char *origin, nxvk_graph **out);
void nxvk_graph_free(nxvk_graph *g);
/* Read and parse a graph file (handle inputs refused: they are port-only). */
int nxvk_graph_load(const char *path, nxvk_graph **out);
int nxvk_graph_input_count(const nxvk_graph *g);
const char *nxvk_graph_input_name(const nxvk_graph *g, int i);
nxvk_graph_input_kind nxvk_graph_input_kind_of(const nxvk_graph *g, int i);
const char *nxvk_graph_input_path(const nxvk_graph *g, int i);      /* FILE */
const nxvk_host *nxvk_graph_input_host(const nxvk_graph *g, int i); /* INLINE */
uint64_t nxvk_graph_input_handle(const nxvk_graph *g, int i);       /* HANDLE */
int nxvk_graph_node_count(const nxvk_graph *g);
int nxvk_graph_output_count(const nxvk_graph *g);
const char *nxvk_graph_output_name(const nxvk_graph *g, int i);
const char *nxvk_graph_output_path(const nxvk_graph *g, int i);     /* NULL when none */
int nxvk_graph_output_value(const nxvk_graph *g, int i);
/* A value's name: the input's, or the "out" of the op making it. */
const char *nxvk_graph_value_name(const nxvk_graph *g, int value);
/* The op producing a value (NULL for inputs) and its operands. */
const nxvk_op_desc *nxvk_graph_value_op(const nxvk_graph *g, int value, const nxvk_attrs **attrs,
                                        const int **operands, int *noperands);

/* Run on the GPU in one command buffer, with fusion (below).  values[]
 * (ninputs + nodes long) gets a new reference for every value that exists in
 * memory: the inputs, every output, and every value something other than
 * its own fused kernel reads.  A value that a fused kernel keeps in
 * registers (an intermediate nothing else reads) is never written anywhere
 * and its values[v] is NULL.  The caller frees the non-NULL ones. */
int nxvk_graph_run(nxvk_ctx *c, const nxvk_graph *g, nxvk_tensor *const *inputs,
                   nxvk_tensor **values);

/* Fusion: maximal groups of elementwise ops (unary, binary, compare,
 * select; chains and trees, broadcast inputs included) whose results all
 * have one shape become one generated GLSL kernel (from the op table's own
 * expressions), compiled at run time, its SPIR-V cached on disk under the
 * SHA-256 of the GLSL.  A group's results that anything outside it reads
 * (graph outputs, other kernels, non-elementwise ops) are written to memory;
 * the rest stay in registers.  What ran is described by an nxvk_plan. */
typedef enum {
  NXVK_CODE_EMBEDDED,      /* one op, its build-time kernel (or none: views, empty results) */
  NXVK_CODE_MEMORY,        /* fused: built earlier in this process */
  NXVK_CODE_DISK,          /* fused: SPIR-V from the on-disk cache (a hit) */
  NXVK_CODE_COMPILED,      /* fused: compiled now (a miss, or the cache is off) */
} nxvk_code_source;

typedef struct nxvk_plan_step {
  bool fused;
  int nnodes;
  int *nodes;              /* graph node indices in order (node i makes value ninputs + i) */
  int ninputs, noutputs;
  int *inputs;             /* fused: values the kernel reads from memory */
  int *outputs;            /* fused: values it writes; its other nodes' values stay in registers */
  nxvk_code_source source;
  char key[65];            /* fused: SHA-256 (hex) of the kernel's GLSL */
  bool cache_corrupt;      /* a cache file failed its checks: ignored and written again */
  bool cache_written;      /* the SPIR-V was written to the cache */
  char note[200];          /* why a cache file was corrupt, or could not be written */
  double glsl_ms, cache_ms, compile_ms, pipeline_ms;
  const char *alone;       /* not fused: why ("not elementwise", ...) */
} nxvk_plan_step;

typedef struct nxvk_plan {
  int nsteps;
  nxvk_plan_step *steps;   /* in the order they were recorded */
  bool fusion;             /* fusion was on */
  bool disk_cache;         /* fused kernels used the on-disk cache */
  int fused_kernels, fused_ops, in_registers;
  double plan_ms, record_ms, run_ms;   /* planning; recording (compiles included); in all */
} nxvk_plan;
void nxvk_plan_free(nxvk_plan *p);
/* The step that computed value v (NULL for graph inputs). */
const nxvk_plan_step *nxvk_plan_step_of(const nxvk_plan *p, const nxvk_graph *g, int v);

/* Options of nxvk_graph_run_opts; all zero = nxvk_graph_run. */
typedef struct nxvk_run_opts {
  bool no_fusion;          /* every op its own build-time kernel */
  bool no_cache;           /* fused kernels neither read nor write the on-disk cache */
  unsigned batch_flags;    /* NXVK_BATCH_TIMESTAMPS */
  double *gpu_ns;          /* out (may be NULL): GPU time with NXVK_BATCH_TIMESTAMPS */
  nxvk_plan **plan;        /* out (may be NULL): what ran; nxvk_plan_free() it */
  /* out (may be NULL): when given, the run is submitted and not waited for:
   * values[] are returned at once, their contents valid once
   * nxvk_graph_finish(*pending) returns NXVK_OK (on an error, free them);
   * this thread must finish it before its next engine call */
  struct nxvk_rec **pending;
} nxvk_run_opts;
int nxvk_graph_run_opts(nxvk_ctx *c, const nxvk_graph *g, nxvk_tensor *const *inputs,
                        nxvk_tensor **values, const nxvk_run_opts *o);
int nxvk_graph_finish(struct nxvk_rec *pending);
/* The CPU reference of the whole graph: values[] (ninputs + nodes long)
 * gets a host tensor for every value, intermediates included. */
int nxvk_graph_ref(const nxvk_graph *g, const nxvk_host *inputs, nxvk_host *values);

/* Check values a fused kernel computed: the reference of `nodes` (graph
 * node indices, ascending) evaluated from values[] (host tensors indexed by
 * value id; those the nodes read from outside must be there, others may be
 * empty), compared with got, the GPU's result for value v (one of the
 * nodes).  The bound is composed from the limits of the ops on the way:
 * each op's result is an interval (its reference at the ends, at zero and
 * at the middle of its operands' intervals, widened by the op's own limit),
 * so an error an op amplifies is carried at its real size and exact chains
 * stay exact.  flush: NXVK_DT() mask of dtypes the device may flush
 * denormals of (a flushed operand or result is then inside the interval).
 * out->bad counts results outside; out->unbounded those that depend on an
 * op where the spec bounds nothing (divide by |y| outside its range);
 * out->forgiven those the composed bound cannot judge (an error carried
 * across a jump or turn of an op: anything goes there); max_abs and max_ulp
 * are measured against the point reference.
 * limit_text (may be NULL) gets the bound in words. */
int nxvk_compare_nodes(const nxvk_graph *g, const int *nodes, int nnodes, const nxvk_host *values,
                       int v, const nxvk_host *got, unsigned flush, nxvk_cmp *out,
                       char *limit_text, size_t len);
/* The judge of a fused chain, as nxvk_check is of one op: nxvk_compare_nodes
 * with the flushes the device's float controls allow (nxvk_flush_dtypes).
 * `run --check`, conformance's fused class and bench's fusion check judge
 * through here. */
int nxvk_check_nodes(const nxvk_device_info *dev, const nxvk_graph *g, const int *nodes, int nnodes,
                     const nxvk_host *values, int v, const nxvk_host *got, nxvk_cmp *out,
                     char *limit_text, size_t len);

#endif /* NXVK_H */
