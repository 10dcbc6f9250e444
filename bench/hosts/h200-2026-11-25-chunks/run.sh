#!/bin/sh
# the batch form of split K with A's k chunks read in place (dot_vec_strided_f32)
# against copied out (dot_kchunk), on the products the rule splits that way
B=${B:-bundle/run.sh}
O=${OUT:-/tmp}/chunks
mkdir -p "$O"
T="--min-time 0.3 --warmup 0.2"
rows() { grep -E '^dot' "$1" | awk '{print $4, $5, $6, $7}' | tr '\n' ' '; }
$B info | head -n 1
S32=1000x3000x700,1000x4000x700,512x6144x1024,1024x2048x1024,5x1000x600x700
for pass in 1 2; do
  for c in strided copy; do
    f="$O/$c-$pass"
    NXVK_KERNEL_STATS=1 NXVK_DOT_CHUNKS=$c $B bench matmul --sizes 4096 --shapes $S32 --dtype f32 $T > "$f.txt" 2> "$f-stats.txt"
    echo "pass $pass $c: $(rows "$f.txt")"
  done
done
grep -h 'dot_vec_strided_f32\|dot_vec_f32' "$O"/*-stats.txt | sort -u
echo "conformance quick dot, batch form forced (strided): $(NXVK_DOT_VEC=1,1,4,3 NXVK_DOT_SPLIT=batch $B conformance --quick --op dot 2>&1 | tail -n 1)"
