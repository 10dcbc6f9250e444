#!/bin/sh
# scripts/gpu-smoke.sh - a first look at a GPU machine through the bundle
# (scripts/bundle.sh): device info and a checked run of a few ops.
B=${B:-bundle/run.sh}
J='{"dtype":"f32","shape":[2,3],"data":[1,-2,3,4,5,"nan"]}'
D='{"dtype":"f64","shape":[2,3],"data":[0.5,-2,3,40,5e-300,"nan"]}'
$B info
for op in exp log sin cos tanh erf expm1 log1p sigmoid round sqrt rsqrt; do
  $B run --op $op --check "$J" | head -1
  $B run --op $op --check "$D" | head -1
done
$B run --op pow --check "$D" "$D" | head -1
$B run --op sum --check "$D" | head -1
$B run --op argmax --check "$J" | head -1
$B run --op random_uniform --attrs '{"shape":[1000],"seed":7}' --check | head -1
$B run --op random_normal --attrs '{"shape":[1000],"seed":7,"dtype":"f64"}' --check | head -1
$B run --op as_type --attrs '{"dtype":"u8"}' --check "$J" | head -1
for n in 1000 1024; do
  $B run --op random_uniform --attrs "{\"shape\":[$n,$n],\"seed\":1}" -o /tmp/a.npy >/dev/null
  $B run --op random_uniform --attrs "{\"shape\":[$n,$n],\"seed\":2}" -o /tmp/b.npy >/dev/null
  $B run --op dot --check /tmp/a.npy /tmp/b.npy -o /tmp/c.npy
done
