#!/bin/sh
# scripts/gpu-tune.sh - quick speed probes on a GPU machine (through the bundle)
B=${B:-bundle/run.sh}
$B bench peak --min-time 0.5 2>&1 | grep -E "^(copy|latency)"
$B bench ops --ops add,negate,exp,sum --sizes 1K,16M,64M --dtype f32,f64 --min-time 0.5 2>&1 | grep -E "^(add|negate|exp|sum) "
for v in vec; do for dt in f32 f64; do
  $B bench matmul --sizes 1024,2048,4096 --dtype $dt --min-time 0.5 2>&1 | grep -E "^dot +$v "
done; done
