# scratch generator: peak_fma.comp whose f64 vec4 kernel is an R x C tile of
# doubles per invocation read from shared memory (R/2 + C/2 dvec2 per k),
# KPI k per loop iteration, LW = 2 (tx = lane % 2 + 2 (w % 4), ty = lane / 2 + 16 (w / 4))
import sys
R, C, KPI = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
src = open(sys.argv[4]).read()
xs = "abcdefghijkl"
L = []
L.append("#if defined(DT_f64) && defined(VEC4)")
L.append("  uint t = gl_LocalInvocationID.x, lane = t % 32u, w = t / 32u;")
L.append("  uint tx = lane % 2u + 2u * (w % 4u), ty = lane / 2u + 16u * (w / 4u);")
L.append("  double ta = double(uintBitsToFloat(meta[m])), tc = double(uintBitsToFloat(meta[m + 1u])) * 1e-6;")
L.append("  for (uint v = t; v < 8u * 129u; v += 256u) As[v] = dvec2(ta + double(v) * 1e-4, ta - double(v) * 1e-4);")
L.append("  for (uint v = t; v < 8u * 128u; v += 256u) Bs[v] = dvec2(tc * double(v + 1u), tc * double(v + 2u));")
L.append("  barrier();")
acc = ["oc%d_%d" % (i, j) for i in range(R) for j in range(C)]
L.append("  double " + ", ".join(a + " = 0.0" for a in acc) + ";")
L.append("  for (uint i = 0u; i < ITERS; i++) {")
for u in range(KPI):
    L.append("    { uint kk = (i * %du + %du) & 7u;" % (KPI, u))
    L.append("      dvec2 " + ", ".join("x%s = As[kk * 129u + %du + ty]" % (xs[j], 32 * j) for j in range(R // 2)) + ";")
    L.append("      dvec2 " + ", ".join("y%s = Bs[kk * 128u + %du + tx]" % (xs[j], 8 * j) for j in range(C // 2)) + ";")
    for i in range(R):
        xv = "x%s.%s" % (xs[i // 2], "xy"[i % 2])
        for j in range(C):
            yv = "y%s.%s" % (xs[j // 2], "xy"[j % 2])
            L.append("      oc%d_%d = fma(%s, %s, oc%d_%d);" % (i, j, xv, yv, i, j))
    L.append("    }")
L.append("  }")
L.append("  double orr = " + " + ".join(acc) + ";")
L.append("  if (meta[m + 2u] != 0u || orr == double(uintBitsToFloat(meta[m + 3u]))) o[gl_LocalInvocationID.x] = ST(orr);")
L.append("  return;")
L.append("#endif")
body = "\n".join(L) + "\n"
decl = "#if defined(DT_f64) && defined(VEC4)\nshared dvec2 As[8u * 129u];\nshared dvec2 Bs[8u * 128u];\n#endif\n"
marker = "#else\nvoid main() {\n  uint m = pc.meta_off;\n"
assert marker in src
src = src.replace(marker, "#else\n" + decl + "void main() {\n  uint m = pc.meta_off;\n" + body)
open(sys.argv[5], "w").write(src)
