# Shader names genshaders makes from src/ops/elementwise.def (for the Makefile).
# ALL / ANY / FLOAT / SIGNED / INT are the dtype sets the .def uses; only the
# embedded dtypes (the Makefile's DTYPES) get build-time shaders.
/^EW\(/ {
  split($0, f, /[(, ]+/)
  set = (f[4] == "ALL" || f[4] == "ANY") ? "f32 f64 i32 u8" : (f[4] == "SIGNED" ? "f32 f64 i32" : (f[4] == "INT" ? "i32 u8" : "f32 f64"))
  n = split(set, d, " ")
  for (i = 1; i <= n; i++) print "ew_" f[2] "_" d[i]
}
