#!/bin/sh
# scratch: split K's batch form summing in its own pass (KFOLD) against dot_ksum
B=bundle/run.sh
O=$OUT
T="--min-time 0.3 --warmup 0.2"
S32=1000x3000x700,1024x2048x1024,512x2048x512,256x4096x256,512x6144x1024,512x1024x512
for pass in 1 2; do for f in 0 1; do
  NXVK_DOT_FOLD=$f $B bench matmul --variant tiled --sizes 1024,4096 --shapes $S32 --dtype f32 $T > $O/fold$f-$pass.txt 2>&1
  echo "pass $pass fold $f: $(grep -E '^dot' $O/fold$f-$pass.txt | awk '{print $4, $5 $6}' | tr '\n' ' ')"
done; done
echo "== quick dot conformance, fold on (default) and forced forms"
echo "rule: $($B conformance --quick --op dot 2>&1 | tail -n 1)"
for form in batch copy; do
  echo "$form 1,1,4,4: $(NXVK_DOT_FOLD=1 NXVK_DOT_VEC=1,1,4,4 NXVK_DOT_SPLIT=$form $B conformance --quick --op dot --dtype f32 2>&1 | tail -n 1)"
  echo "$form 2,2,8,5: $(NXVK_DOT_FOLD=1 NXVK_DOT_VEC=2,2,8,5 NXVK_DOT_SPLIT=$form $B conformance --quick --op dot --dtype f32 2>&1 | tail -n 1)"
done
