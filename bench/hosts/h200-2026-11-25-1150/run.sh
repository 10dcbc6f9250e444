for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
R=$OUT/r
mkdir -p $R
sh scripts/gpu-final.sh bench $R > $R/run.log 2>&1
JOBS=16 sh scripts/gpu-final.sh check $R/check >> $R/run.log 2>&1
rm -rf $R/cache $R/check/cache $R/check/conformance/*.json
tail -n 1 $R/check/conformance/summary.txt; tail -n 1 $R/check/stress-all.txt
cd $OUT && tar czf r.tgz r && rm -rf r
