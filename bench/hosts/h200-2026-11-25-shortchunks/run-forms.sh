for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json NXVK_CACHE_DIR=/tmp/cache
rows() { grep -E '^dot' "$1" | awk '{print $4, $5, $6, $7}' | tr '\n' ' '; }
for pass in 1 2; do
  for form in "" kernel batch copy; do
    NXVK_KERNEL_STATS=1 NXVK_DOT_SPLIT=$form bundle/run.sh bench matmul --variant vec --sizes 1024 --shapes 512x2048x512,256x4096x256,512x1024x512,768x2048x768,1024x1024x2048 --dtype f32 --min-time 0.3 --warmup 0.2 > /tmp/o.txt 2> /tmp/s.txt
    echo "pass $pass ${form:-rule}: $(rows /tmp/o.txt) $(grep -oE 'dot_(vec_strided|vec_split|vec|kchunk)[a-z0-9_]* \[[0-9,]*\]' /tmp/s.txt | sort -u | tr '\n' ' ')"
  done
done | tee $OUT/summary.txt
