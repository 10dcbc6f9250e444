for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json NXVK_CACHE_DIR=/tmp/cache
R=$OUT/e2e2; mkdir -p $R
{ lscpu; cat /sys/bus/pci/devices/*/local_cpulist 2>/dev/null | sort | uniq -c; nvidia-smi topo -m; } > $R/topo.txt 2>&1
bundle/run.sh bench ops --ops add --sizes 1K --min-time 0.1 > /dev/null 2>&1
n=$(nproc)
for pass in 1 2; do
  c=0
  while [ $c -lt $n ]; do
    echo "pass $pass cpu $c: $(taskset -c $c bundle/run.sh bench ops --ops add --sizes 1K 2>&1 | grep -E '^add' | awk '{print "e2e", $13, $14}')"
    c=$((c + 1))
  done
done | tee $R/summary.txt
cd $OUT && tar czf e2e2.tgz e2e2 && rm -rf e2e2
