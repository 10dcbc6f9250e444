for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
R=$OUT/r
mkdir -p $R
sh scripts/gpu-final.sh bench $R > $R/run.log 2>&1
JOBS=16 sh scripts/gpu-final.sh check $R/check >> $R/run.log 2>&1
rows() { grep -E '^dot' "$1" | awk '{print $4, $5, $6, $7}' | tr '\n' ' '; }
for pass in 1 2; do
  for c in "" copy; do
    NXVK_KERNEL_STATS=1 NXVK_DOT_SPLIT=$c bundle/run.sh bench matmul --variant vec --sizes 256 --shapes 1000x3000x700,1000x4000x700,512x6144x1024,1024x2048x1024,1024x2560x1024,1024x3072x1024 --dtype f32 --min-time 0.3 --warmup 0.2 > /tmp/o.txt 2> /tmp/s.txt
    echo "pass $pass ${c:-rule}: $(rows /tmp/o.txt | cut -d' ' -f5-) $(grep -o 'dot_vec_strided_f32 \[[0-9,]*\]' /tmp/s.txt | tr '\n' ' ')"
  done
done | tee $R/chunks.txt
rm -rf $R/cache $R/check/conformance/*.json
tail -n 3 $R/check/*.txt 2>/dev/null | tail -n 20
cd $OUT && tar czf r.tgz r && rm -rf r
