#!/bin/sh
# scratch: split counts that fill two whole waves at 1000x3000x700 (128 x 128 tiles: 48 tiles, 264 slots)
B=bundle/run.sh
T="--min-time 0.3 --warmup 0.2"
for pass in 1 2; do for s in 5 8 10 11 16; do for form in kernel batch; do
  r=$(NXVK_DOT_SPLIT=$form NXVK_DOT_VEC=2,2,8,$s $B bench matmul --variant tiled --sizes 256 --shapes 1000x3000x700 --dtype f32 $T 2>&1 | grep -E '^dot.*1000x3000x700' | awk '{print $5 $6, $7}')
  echo "pass $pass S=$s $form: $r"
done; done; done
