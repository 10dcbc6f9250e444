for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json NXVK_CACHE_DIR=/tmp/cache
R=$OUT/e2e; mkdir -p $R
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw --format=csv,noheader -lms 20 > $R/smi.csv 2>&1 &
smi=$!
bundle/run.sh bench ops --ops add --sizes 1K --min-time 0.1 > /dev/null 2>&1
for i in 1 2 3 4 5 6 7 8; do
  for idle in "" --idle-gpu; do
    echo "$(date -u +%T.%N | cut -c1-12) run $i ${idle:-busy}: $(bundle/run.sh bench ops --ops add --sizes 1K $idle 2>&1 | grep -E '^add' | awk '{print "kernel", $7, $8, "e2e", $13, $14}')"
  done
  sleep 0.5
done | tee $R/summary.txt
PYTHONUNBUFFERED=1 NXVK="$PWD/bundle/nxvk" LD_LIBRARY_PATH="$PWD/bundle/lib" timeout 60 python3 tests/port/test_port.py --latency > $R/port-latency-1.txt 2>&1 || true
PYTHONUNBUFFERED=1 NXVK="$PWD/bundle/nxvk" LD_LIBRARY_PATH="$PWD/bundle/lib" timeout 60 python3 tests/port/test_port.py --latency > $R/port-latency-2.txt 2>&1 || true
grep 'in-process upload' $R/port-latency-*.txt
kill $smi
cd $OUT && tar czf e2e.tgz e2e && rm -rf e2e
