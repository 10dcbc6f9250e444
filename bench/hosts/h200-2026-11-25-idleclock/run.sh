for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig; export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
B=bundle/run.sh; R=$OUT/r; mkdir -p $R
T="--min-time 0.3 --warmup 0.3 --cpu-limit 0.5"
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv,noheader -lms 100 > $R/smi.csv 2>&1 &
P=$!
st() { echo "$(date -u +%T) $*" >> $R/steps.txt; }
st sweep1; $B bench ops --ops add,exp,sum --dtype f32,f64 $T --json $R/sweep1.json > $R/sweep1.txt 2>&1
for i in 1 2; do for f in 1 0; do st sum-fold$f-$i
  NXVK_REDUCE_FOLD=$f $B bench ops --ops sum --sizes 16M,64M --dtype f32,f64 $T --json $R/sum-fold$f-$i.json > $R/sum-fold$f-$i.txt 2>&1
done; done
st sweep2; $B bench ops --ops add,exp,sum --dtype f32,f64 $T --json $R/sweep2.json > $R/sweep2.txt 2>&1
st torch; python3 bench/compare_torch.py --nxvk-json $R/sweep2.json --min-time 0.3 --out $R/compare.json > $R/compare.txt 2>&1
st end; kill $P
cat $R/steps.txt
for f in $R/sweep1.txt $R/sum-fold*.txt $R/sweep2.txt; do echo "== $f"; grep -E "^sum .* (16M|64M) " $f | awk '{print $1,$2,$3,$6,$7,$8,$12}'; done
grep -E "^(add|exp|sum) " $R/compare.txt | grep -E " (16M|64M) "
cd $OUT && tar czf exp5.tgz r && rm -rf r
