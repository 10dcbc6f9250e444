for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json NXVK_CACHE_DIR=/tmp/cache
R=$OUT/e2e3; mkdir -p $R
bundle/run.sh bench ops --ops add --sizes 1K --min-time 0.1 > /dev/null 2>&1
for set in all 0-13 0-7 0-1 14-15; do
  for i in 1 2 3 4 5 6; do
    if [ $set = all ]; then pre=; else pre="taskset -c $set"; fi
    $pre bundle/run.sh bench ops --ops add --sizes 1K --min-time 0.5 > $R/o.txt 2>&1 &
    p=$!; sleep 0.6
    thr=$(ls /proc/$p/task 2>/dev/null | wc -l); cpus=$(ps -L -o psr= -p $p 2>/dev/null | tr -s ' \n' ' ')
    wait $p
    echo "cpus $set run $i: $(grep -E '^add' $R/o.txt | awk '{print "e2e", $13, $14}') threads $thr on $cpus"
  done
done | tee $R/summary.txt
cd $OUT && tar czf e2e3.tgz e2e3 && rm -rf e2e3
