#!/bin/sh
# scratch: the tall 8 x 32 grid (256 x 64 tiles) for f32 at the odd shape
B=bundle/run.sh
O=$OUT
T="--min-time 0.3 --warmup 0.2"
rows() { grep -E '^dot' "$1" | awk '{print $4, $5, $6, $7}' | tr '\n' ' '; }
regs() { grep -oE '(dot_vec[a-z0-9_]*|dot_kchunk) \[[0-9,]*\].*Register Count=[0-9]*' "$1" |
         sed -E 's/\].*Register Count=/] regs /' | tr '\n' ' '; }
$B info > $O/info.txt 2>&1; grep -E "device 0|coop" $O/info.txt
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
for g in normal tall; do for v in 2,2,8,1 2,2,16,1; do
  f=$O/sq-$g-$(echo $v | tr , _)
  NXVK_DOT_GRID=$g NXVK_KERNEL_STATS=1 NXVK_DOT_VEC=$v $B bench matmul --variant vec --sizes 1024,4096 --shapes 4095x4095x4095 --dtype f32 $T > $f.txt 2> $f-stats.txt
  echo "sq $g $v: $(rows $f.txt) $(regs $f-stats.txt)"
done; done
for pass in 1 2; do
  for v in 2,2,8,4 2,2,8,5 2,2,8,6 2,2,8,8 2,2,16,6; do for form in kernel batch; do
    f=$O/odd-tall-$form-$(echo $v | tr , _)-$pass
    NXVK_DOT_GRID=tall NXVK_KERNEL_STATS=1 NXVK_DOT_SPLIT=$form NXVK_DOT_VEC=$v $B bench matmul --variant vec --sizes 256 --shapes 1000x3000x700 --dtype f32 $T > $f.txt 2> $f-stats.txt
    echo "pass $pass tall $v $form: $(rows $f.txt) $(regs $f-stats.txt)"
  done; done
  f=$O/odd-rule-$pass
  $B bench matmul --variant tiled --sizes 256 --shapes 1000x3000x700 --dtype f32 $T > $f.txt 2>&1
  echo "pass $pass rule: $(rows $f.txt)"
done
echo "== quick dot conformance, tall grid forced"
for v in 2,2,8,1 2,2,8,6; do for form in kernel batch; do
  echo "$v $form: $(NXVK_DOT_GRID=tall NXVK_DOT_SPLIT=$form NXVK_DOT_VEC=$v $B conformance --quick --op dot --dtype f32 2>&1 | tail -n 1)"
done; done
