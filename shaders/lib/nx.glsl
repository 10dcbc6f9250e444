// nx.glsl - the overloaded nx_* names the op table's expressions use, for
// float, double, int and uint (u8).  f32 transcendentals are the driver's
// builtins (their precision is what conformance measures); f64 ones are ours
// (nxmath.glsl, GLSL has none for double).
// glslang drops functions a shader does not call, so an f32 shader that
// includes the double overloads still never asks the device for Float64.

// ---- f32
// numpy's maximum/minimum: a NaN operand wins, ties give b (so the sign of
// equal zeros comes from b); sign(±0) is +0 and sign(NaN) is NaN.
float nx_max(float a, float b) { return isnan(a) ? a : (isnan(b) ? b : (a > b ? a : b)); }
float nx_min(float a, float b) { return isnan(a) ? a : (isnan(b) ? b : (a < b ? a : b)); }
float nx_sign(float a) { return a > 0.0 ? 1.0 : (a < 0.0 ? -1.0 : (isnan(a) ? a : 0.0)); }
float nx_div(float a, float b) { return a / b; }
float nx_rem(float a, float b) { return nxf_rem(a, b); }
float nx_pow(float a, float b) { return nxf_pow(a, b); }
float nx_atan2(float a, float b) { return nxf_atan2(a, b); }
float nx_exp(float a) { return exp(a); }
// Denormal inputs are scaled into the normal range first: lavapipe's
// built-in log returns about -88.03 for every denormal (conformance found it).
float nx_log(float a) {
  return (a > 0.0 && a < 1.17549435e-38) ? log(a * 16777216.0) - 16.6355323334 : log(a);
}
float nx_rsqrt(float a) { return inversesqrt(a); }
float nx_sin(float a) { return sin(a); }
float nx_cos(float a) { return cos(a); }
float nx_abs(float a) { return abs(a); }
float nx_sigmoid(float a) { return nxf_sigmoid(a); }
float nx_tanh(float a) { return nxf_tanh(a); }
float nx_round(float a) { return nxf_round(a); }
float nx_expm1(float a) { return nxf_expm1(a); }
float nx_log1p(float a) { return nxf_log1p(a); }
float nx_erf(float a) { return nxf_erf(a); }

// ---- f64
double nx_max(double a, double b) { return isnan(a) ? a : (isnan(b) ? b : (a > b ? a : b)); }
double nx_min(double a, double b) { return isnan(a) ? a : (isnan(b) ? b : (a < b ? a : b)); }
double nx_sign(double a) { return a > 0.0lf ? 1.0lf : (a < 0.0lf ? -1.0lf : (isnan(a) ? a : 0.0lf)); }
double nx_div(double a, double b) { return a / b; }
double nx_rem(double a, double b) { return nxd_rem(a, b); }
double nx_pow(double a, double b) { return nxd_pow(a, b); }
double nx_atan2(double a, double b) { return nxd_atan2(a, b); }
double nx_exp(double a) { return nxd_exp(a); }
double nx_log(double a) { return nxd_log(a); }
double nx_rsqrt(double a) { return nxd_rsqrt(a); }
double nx_sin(double a) { return nxd_sin(a); }
double nx_cos(double a) { return nxd_cos(a); }
double nx_abs(double a) { return abs(a); }
double nx_sigmoid(double a) { return nxd_sigmoid(a); }
double nx_tanh(double a) { return nxd_tanh(a); }
double nx_round(double a) { return nxd_round(a); }
double nx_expm1(double a) { return nxd_expm1(a); }
double nx_log1p(double a) { return nxd_log1p(a); }
double nx_erf(double a) { return nxd_erf(a); }

// ---- i32
// Truncating, x/0 = 0, INT_MIN/-1 = INT_MIN: computed on magnitudes so no
// case relies on how a driver divides negative integers.
int nx_div(int a, int b) {
  if (b == 0) return 0;
  uint q = uint(a < 0 ? -a : a) / uint(b < 0 ? -b : b);
  return ((a < 0) != (b < 0)) ? -int(q) : int(q);
}
int nx_rem(int a, int b) {
  if (b == 0) return 0;
  uint r = uint(a < 0 ? -a : a) % uint(b < 0 ? -b : b);
  return a < 0 ? -int(r) : int(r);
}
int nx_max(int a, int b) { return a > b ? a : b; }
int nx_min(int a, int b) { return a < b ? a : b; }
int nx_abs(int a) { return a < 0 ? -a : a; }
int nx_sign(int a) { return a > 0 ? 1 : (a < 0 ? -1 : 0); }

// ---- u8
uint nx_div(uint a, uint b) { return b == 0u ? 0u : a / b; }
uint nx_rem(uint a, uint b) { return b == 0u ? 0u : a % b; }
uint nx_max(uint a, uint b) { return a > b ? a : b; }
uint nx_min(uint a, uint b) { return a < b ? a : b; }
