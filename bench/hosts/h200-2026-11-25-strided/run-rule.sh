B=bundle/run.sh
rows() { grep -E '^dot' "$1" | awk '{print $4, $5, $6, $7}' | tr '\n' ' '; }
S32=1000x3000x700,1000x4000x700,512x6144x1024,1024x2048x1024
for pass in 1 2; do
  for c in strided copy; do
    NXVK_KERNEL_STATS=1 NXVK_DOT_CHUNKS=$c $B bench matmul --sizes 4096 --shapes $S32 --dtype f32 --min-time 0.3 --warmup 0.2 > /tmp/o.txt 2> /tmp/s-$c.txt
    echo "pass $pass $c: $(rows /tmp/o.txt | cut -d' ' -f1-4,25-)"
  done
  NXVK_DOT_STRIDED_ALL=1 $B bench matmul --variant vec --sizes 4096 --shapes 5x1000x600x700 --dtype f32 --min-time 0.3 --warmup 0.2 > /tmp/o.txt 2>&1
  echo "pass $pass strided S=1 (SCH=1): $(rows /tmp/o.txt)"
done
grep -h 'dot_vec_strided_f32\|dot_vec_f32' /tmp/s-*.txt | sort -u
