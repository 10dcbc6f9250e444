#!/bin/sh
B=bundle/run.sh
for k in "" fx old; do
  echo "== f64 kernel '$k'"
  NXVK_DOT_KERNEL=$k $B bench matmul --variant vec --sizes 1024,4096 --dtype f64 --min-time 0.3 --warmup 0.3 | grep -E "^dot|error"
  echo "== f32 kernel '$k'"
  NXVK_DOT_KERNEL=$k $B bench matmul --variant vec --sizes 1024,2048,4096 --dtype f32 --min-time 0.3 --warmup 0.3 | grep -E "^dot|error"
done
for cfg in 1,1,8 1,2,8 2,2,8; do
  echo "== shapes NXVK_DOT_VEC=$cfg"
  NXVK_DOT_VEC=$cfg $B bench matmul --variant vec --sizes 64 --shapes 1000x3000x700,1024x3072x704,1000x1024x700,1024x1024x1024 --dtype f32 --min-time 0.3 --warmup 0.3 | grep -E "^dot .*x|error"
done
for d in "" 1; do
  echo "== ops NXVK_NO_DEDICATED='$d'"
  NXVK_NO_DEDICATED=$d $B bench ops --ops add,exp --sizes 16M,32M,64M --dtype f32 --min-time 0.3 --warmup 0.5 --cpu-limit 0.01 | grep -E "^(add|exp) |error"
  for by in 16M 256M; do NXVK_NO_DEDICATED=$d $B bench peak --bytes $by --min-time 0.3 | grep -E "^(copy|latency)"; done
done
