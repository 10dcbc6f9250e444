for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig; export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
B=bundle/run.sh; mkdir -p $OUT/t3; $B info | head -1
for run in "128 2 2,4,8" "128 4 2,4,8" "128 8 2,4,8" "128 2 3,4,8" "128 2 2,3,8" "128 2 1,4,8" "128 2 2,4,4" "128 2 2,4,6" "128 2 3,4,4" "128 2 4,3,8" "128 2 2,4,8"; do
  set -- $run
  NXVK_KERNEL_STATS=1 NXVK_DOT_NT=$1 NXVK_DOT_LANES=$2 NXVK_DOT_VEC=$3 $B bench matmul --variant vec --sizes 2048,4096 --dtype f64 --min-time 0.2 --warmup 0.2 > $OUT/t3/f64-$1-$2-$3.txt 2> $OUT/t3/f64-$1-$2-$3-stats.txt
  echo "$1 $2 $3 $(grep -E '^dot' $OUT/t3/f64-$1-$2-$3.txt | awk '{print $7}' | tr '\n' ' ') $(grep -o 'Register Count=[0-9]*' $OUT/t3/f64-$1-$2-$3-stats.txt | head -1)"
done | tee $OUT/t3/summary.txt
cd $OUT && tar czf t3.tgz t3 && rm -rf t3
