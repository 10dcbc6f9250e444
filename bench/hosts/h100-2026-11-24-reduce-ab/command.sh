for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig; export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
export LD_LIBRARY_PATH=$PWD/bundle/lib; mkdir -p $OUT/red
for round in 1 2; do for bin in nxvk-fn nxvk; do
  bundle/$bin bench ops --ops sum --sizes 4M,16M,64M --dtype f32,f64 --min-time 0.3 --warmup 0.3 --cpu-limit 0.01 \
    --json $OUT/red/ops-$bin-$round.json > $OUT/red/ops-$bin-$round.txt 2>&1
  echo "== $bin round $round"; grep -E "^sum " $OUT/red/ops-$bin-$round.txt | awk '{print $1,$2,$3,$6,$7,$8,$9,$(NF-3),$(NF-2),$(NF-1),$NF}'
done; done
python3 bench/compare_torch.py --nxvk-json $OUT/red/ops-nxvk-2.json --min-time 0.3 --out $OUT/red/compare.json > $OUT/red/compare.txt 2>&1
tail -8 $OUT/red/compare.txt; cd $OUT && tar czf red.tgz red && rm -rf red
