#!/bin/sh
# scripts/gpu-tune-oddshape.sh - split K in two forms on the products that
# take it (1000x3000x700, 1024^2): the split kernel (dot_vec_split_<dtype>)
# against A's k chunks run as a batch on the unsplit kernel
# (NXVK_DOT_SPLIT=batch: read in place where S is a power of two, else
# repacked by dot_kchunk; =copy repacks always), over tiles and S
# (NXVK_DOT_VEC=RB,CB,BK,S), each cell in both forms, two passes; with the
# driver's register counts (NXVK_KERNEL_STATS).  Through the bundle
# (scripts/bundle.sh).  Logs go to $OUT (default /tmp).
B=${B:-bundle/run.sh}
O=${OUT:-/tmp}
T="--min-time 0.3 --warmup 0.2"
# the rows of one bench log: shape or n, kernel time, GFLOPS
rows() { grep -E '^dot' "$1" | awk '{print $4, $5, $6, $7}' | tr '\n' ' '; }
# the dot kernels a stats log (NXVK_KERNEL_STATS) lists, with their registers
regs() { grep -oE '(dot_vec[a-z0-9_]*|dot_kchunk) \[[0-9,]*\].*Register Count=[0-9]*' "$1" |
         sed -E 's/\].*Register Count=/] regs /' | tr '\n' ' '; }
# f32 settings (RB,CB,BK,S) in both forms, two passes: sweep NAME "SETTINGS"
# SIZES -> $O/NAME-FORM-SETTING-PASS.txt and -stats.txt (the size ladder SIZES
# then 1000x3000x700), one line per cell
sweep() {
  for pass in 1 2; do
    for v in $2; do
      for form in kernel batch; do
        f="$O/$1-$form-$(echo $v | tr , _)-$pass"
        NXVK_KERNEL_STATS=1 NXVK_DOT_SPLIT=$form NXVK_DOT_VEC=$v $B bench matmul --variant vec --sizes "$3" \
          --shapes 1000x3000x700 --dtype f32 $T > "$f.txt" 2> "$f-stats.txt"
        echo "pass $pass $v $form: $(rows "$f.txt") $(regs "$f-stats.txt")"
      done
    done
  done
}
# RULE=1: the rule (1.1 tie margin, batch form for 128 x 128 tiles in whole
# chunks of at least 512) against either form forced, on products that split
if [ "${RULE:-}" ]; then
  S32=1000x3000x700,1000x4000x700,512x6144x1024,1024x2048x1024,768x4096x768,256x8192x256
  for pass in 1 2; do
    for form in rule kernel batch; do
      f="$O/rule3-$form-$pass"
      [ $form = rule ] && e= || e=$form
      NXVK_KERNEL_STATS=1 NXVK_DOT_SPLIT=$e $B bench matmul --variant tiled --sizes 512,1024,4096 \
        --shapes $S32 --dtype f32 $T > "$f.txt" 2> "$f-stats.txt"
      NXVK_DOT_SPLIT=$e $B bench matmul --variant tiled --sizes 1024 --shapes 512x4096x512,256x8192x256 \
        --dtype f64 $T > "$f-f64.txt" 2>&1
      echo "pass $pass $form: $(rows "$f.txt") f64: $(rows "$f-f64.txt")"
    done
  done
  exit 0
fi
# TILES=1: wider tiles (RB,CB up to 2,4 and 1,3), which hold fewer rows of
# workgroups per SM, at the odd shape in both forms and unsplit at 4096^2
# (each tile's square rate), with the driver's register counts
if [ "${TILES:-}" ]; then
  for v in 2,2,8,1 2,3,8,1 2,3,16,1 2,4,8,1 1,3,8,1; do
    f="$O/sq-$(echo $v | tr , _)"
    NXVK_KERNEL_STATS=1 NXVK_DOT_VEC=$v $B bench matmul --variant vec --sizes 4096 --dtype f32 $T \
      > "$f.txt" 2> "$f-stats.txt"
    echo "4096 $v: $(rows "$f.txt") $(regs "$f-stats.txt")"
  done
  sweep tile "2,2,8,5 2,3,8,4 2,3,16,4 2,3,8,3 2,3,8,2 2,3,16,2 2,4,8,5 2,4,16,5 2,4,8,4 1,3,8,4 1,3,16,4 4,2,8,5" 256
  exit 0
fi
echo "== conformance (quick dot) with the batch form forced"
for v in 2,2,8,5 1,2,8,4; do
  echo "$v: $(NXVK_DOT_SPLIT=batch NXVK_DOT_VEC=$v $B conformance --quick --op dot 2>&1 | tail -n 1)"
done
echo "== the rule in both forms: 4096 1024 and 1000x3000x700 (f32), 1024 and 1000x3000x700 (f64)"
for pass in 1 2; do
  for form in kernel batch; do
    NXVK_KERNEL_STATS=1 NXVK_DOT_SPLIT=$form $B bench matmul --variant tiled --sizes 1024,4096 \
      --shapes 1000x3000x700 --dtype f32 $T > "$O/rule-$form-$pass.txt" 2> "$O/rule-$form-$pass-stats.txt"
    NXVK_DOT_SPLIT=$form $B bench matmul --variant tiled --sizes 1024 --shapes 1000x3000x700 \
      --dtype f64 $T > "$O/rule64-$form-$pass.txt" 2>&1
    echo "pass $pass $form f32: $(rows "$O/rule-$form-$pass.txt") f64: $(rows "$O/rule64-$form-$pass.txt")"
  done
done
echo "== RB,CB,BK,S in both forms: 1024 1000x3000x700 (f32)"
sweep cell "2,2,8,4 2,2,8,5 2,2,8,3 2,2,8,6 2,2,8,8 1,2,8,4 1,2,8,5 1,2,8,6 2,2,16,5 1,1,8,3" 1024
