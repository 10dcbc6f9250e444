for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json NXVK_CACHE_DIR=/tmp/cache
echo "conformance quick dot: $(bundle/run.sh conformance --quick --op dot 2>&1 | tail -n 1)"
echo "conformance quick dot, 1,1,4,4 batch: $(NXVK_DOT_VEC=1,1,4,4 NXVK_DOT_SPLIT=batch bundle/run.sh conformance --quick --op dot 2>&1 | tail -n 1)"
NXVK_KERNEL_STATS=1 bundle/run.sh bench matmul --variant vec --sizes 1024 --shapes 1024x2048x1024,512x6144x1024,1000x3000x700 --dtype f32 --min-time 0.3 --warmup 0.2 2>/tmp/s.txt | grep -E '^dot'
grep -oE 'dot_(vec_strided|vec_split|vec|kchunk)[a-z0-9_]* \[[0-9,]*\]' /tmp/s.txt | sort -u | tr '\n' ' '
