B=bundle/run.sh
rows() { grep -E '^dot' "$1" | awk '{print $4, $5, $6, $7}' | tr '\n' ' '; }
for pass in 1 2; do
  for v in 2,2,8,4 2,2,8,5 2,2,8,3; do
    for c in strided copy; do
      NXVK_DOT_SPLIT=batch NXVK_DOT_VEC=$v NXVK_DOT_CHUNKS=$c $B bench matmul --variant vec --sizes 256 --shapes 1000x2400x700,1000x3000x700,1024x2560x1024,1024x3072x1024,1000x2560x700 --dtype f32 --min-time 0.2 --warmup 0.1 > /tmp/o.txt 2>&1
      echo "pass $pass $v $c: $(rows /tmp/o.txt | cut -d' ' -f5-)"
    done
  done
done
