#version 450
// peak_coopmat.comp - the device's cooperative-matrix (tensor-core) rate,
// for `nxvk bench peak` (not an op), as vkpeak measures it: every subgroup
// keeps NACC accumulators in registers and runs NACC independent
// coopMatMulAddNV chains ITERS times on one A and one B fragment (filled
// from the metadata, so nothing folds at compile time).  FM x FN x FK is
// one of the device's configurations (the host picks the largest listed):
// f16 x f16 + f32 -> f32, with -DINT8 s8 x s8 + s32 -> s32, or with -DBF16
// bf16 x bf16 + f32 -> f32: the SPIR-V made KHR by src/vk/spirv_khr.c,
// whose rules this form keeps: A and B loaded from shared memory (bf16 bits
// from the metadata's f32 x and y), never built or computed on, and B a
// type of its own (its rows the specialization constant FKB); -DKHR16: f16
// the same way, made KHR without bf16 (NVIDIA's KHR multiply-adds run faster).
// After n iterations every element of every accumulator is n FK x y; their
// sum (NACC of them) is stored only when meta[0] is nonzero (the check run)
// or when its first element equals meta[1], a value it never reaches: the
// work cannot be dropped and timed runs write no memory.
// spec constants: 0 workgroup size (a multiple of 32), 1 loop iterations.
// meta: [0] store flag, [1] sentinel (f32 or i32 bits), [2] x, [3] y (f32
// bits, or integers with -DINT8).
// binding 1: FM x FN results per subgroup of the first workgroup.
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_vote : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#ifdef INT8
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_NV_integer_cooperative_matrix : require
#endif
#ifndef FM
#define FM 16u
#define FN 16u
#define FK 16u
#endif
#define NACC 8

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint ITERS = 1024u;
layout(push_constant) uniform PC { uint meta_off; } pc;
layout(std430, binding = 0) readonly buffer Meta { uint meta[]; };
#ifdef INT8
layout(std430, binding = 1) writeonly buffer Out { int o[]; };
#define AT icoopmatNV<8, gl_ScopeSubgroup, FM, FK>
#define BT icoopmatNV<8, gl_ScopeSubgroup, FK, FN>
#define CT icoopmatNV<32, gl_ScopeSubgroup, FM, FN>
#elif defined(BF16) || defined(KHR16)
layout(std430, binding = 1) writeonly buffer Out { float o[]; };
layout(constant_id = 9) const uint FKB = FK;
#define AT fcoopmatNV<16, gl_ScopeSubgroup, FM, FK>
#define BT fcoopmatNV<16, gl_ScopeSubgroup, FKB, FN>
#define CT fcoopmatNV<32, gl_ScopeSubgroup, FM, FN>
shared uint ab[(FM * FK + FK * FN) / 2u]; // A's bf16 pairs, then B's
#else
layout(std430, binding = 1) writeonly buffer Out { float o[]; };
#define AT fcoopmatNV<16, gl_ScopeSubgroup, FM, FK>
#define BT fcoopmatNV<16, gl_ScopeSubgroup, FK, FN>
#define CT fcoopmatNV<32, gl_ScopeSubgroup, FM, FN>
#endif

void main() {
  uint m = pc.meta_off;
#ifdef INT8
  AT a = AT(int8_t(int(meta[m + 2u])));
  BT b = BT(int8_t(int(meta[m + 3u])));
  CT acc[NACC];
  [[unroll]] for (int j = 0; j < NACC; j++) acc[j] = CT(0);
#elif defined(BF16) || defined(KHR16)
#ifdef BF16
  uint xb = meta[m + 2u] >> 16u, yb = meta[m + 3u] >> 16u; // x and y are exact in bf16
#else
  uint xb = packHalf2x16(vec2(uintBitsToFloat(meta[m + 2u]), 0.0)), yb = packHalf2x16(vec2(uintBitsToFloat(meta[m + 3u]), 0.0));
#endif
  for (uint i = gl_LocalInvocationIndex; i < (FM * FK + FK * FN) / 2u; i += gl_WorkGroupSize.x)
    ab[i] = i < FM * FK / 2u ? xb | xb << 16u : yb | yb << 16u;
  barrier();
  AT a;
  BT b;
  coopMatLoadNV(a, ab, 0u, FK / 2u, false);
  coopMatLoadNV(b, ab, FM * FK / 2u, FN / 2u, false);
  CT acc[NACC];
  [[unroll]] for (int j = 0; j < NACC; j++) acc[j] = CT(0.0);
#else
  AT a = AT(float16_t(uintBitsToFloat(meta[m + 2u])));
  BT b = BT(float16_t(uintBitsToFloat(meta[m + 3u])));
  CT acc[NACC];
  [[unroll]] for (int j = 0; j < NACC; j++) acc[j] = CT(0.0);
#endif
  for (uint i = 0u; i < ITERS; i++) {
    [[unroll]] for (int j = 0; j < NACC; j++) acc[j] = coopMatMulAddNV(a, b, acc[j]);
  }
  CT s = acc[0];
  [[unroll]] for (int j = 1; j < NACC; j++) s = s + acc[j];
#ifdef INT8
  bool hit = s[0] == int(meta[m + 1u]);
#else
  bool hit = s[0] == uintBitsToFloat(meta[m + 1u]);
#endif
  if (subgroupAny(meta[m] != 0u || hit) && gl_WorkGroupID.x == 0u)
    coopMatStoreNV(s, o, gl_SubgroupID * FM * FN, FN, false);
}
