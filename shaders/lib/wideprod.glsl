// wideprod.glsl - products of floats with a wide exponent range, for the
// -DWIDE variants of scan.comp (cumulative_product: scanw_<dtype>) and
// window.comp (window_product: windoww_<dtype>).  A running product in the
// dtype's own range under- or overflows where a partial product leaves it
// (2^-70 * 2^-70 * 2^80 * 2^80 is 2^20, but its second prefix is 0 in f32,
// and every later one too), which the CPU reference (long double mantissa,
// unbounded exponent: src/ops/scan.c) does not.  Here a value is WT(m, e):
// m 2^e with m in [1, 2) carrying the sign (0, inf and NaN: m itself, e
// unused), e an integer held in the float.  A product multiplies the
// mantissas with the driver's multiply (in [1, 4): never a denormal, so a
// driver that flushes changes nothing; 0, inf and NaN propagate as IEEE's,
// 0 * inf = NaN) and adds the exponents; e saturates at +-2^22 (past any
// dtype's range, and exact in a float).  The dtype's value is made once, at
// the store, rounded once from m 2^e (denormals from the bits: nx_ldexp_*).
// f16 and bf16 compute in f32 (T float); needs dtype.glsl and nxmath.glsl.
#if defined(DT_f64)
#define WT dvec2
#else
#define WT vec2
#endif
const float WP_EMAX = 4194304.0;

WT wp_one() { return WT(1.0, 0.0); }

WT wp_mul(WT a, WT b) {
  WT p = WT(a.x * b.x, a.y + b.y);
  if (abs(p.x) >= 2.0) p = WT(p.x * 0.5, p.y + 1.0); // exact
  return WT(p.x, clamp(p.y, -WP_EMAX, WP_EMAX));
}

#if defined(DT_f64)
WT wp_from(double x) {
  if (nx_iszerod(x) || nx_isinfd(x) || nx_isnand(x)) return WT(x, 0.0);
  nxunpd u = nx_unpackd(x);
  bool neg = (unpackDouble2x32(x).y >> 31) != 0u;
  return WT(neg ? nx_negd(u.m) : u.m, double(u.e));
}
double wp_to(WT v) {
  if (nx_iszerod(v.x) || nx_isinfd(v.x) || nx_isnand(v.x)) return v.x;
  return nx_ldexp_ddd(v.x, 0.0, int(clamp(v.y, -4000.0, 4000.0)));
}
#else
WT wp_from(float x) {
  uint b = floatBitsToUint(x);
  uint a = b & 0x7fffffffu;
  if (a == 0u || a >= 0x7f800000u) return WT(x, 0.0);
  nxunpf u = nx_unpackf(a); // |x| = u.m 2^(u.e - 23), u.m in [2^23, 2^24)
  return WT(uintBitsToFloat((b & 0x80000000u) | (u.m & 0x007fffffu) | 0x3f800000u), float(u.e));
}
float wp_to(WT v) {
  uint a = floatBitsToUint(v.x) & 0x7fffffffu;
  if (a == 0u || a >= 0x7f800000u) return v.x;
  return nx_ldexp_fff(v.x, 0.0, int(clamp(v.y, -400.0, 400.0)));
}
#endif
