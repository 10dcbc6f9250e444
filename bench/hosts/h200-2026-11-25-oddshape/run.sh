for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig; export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
B=bundle/run.sh; R=$OUT/r; mkdir -p $R; T="--min-time 0.2 --warmup 0.2 --variant tiled --shapes 1000x3000x700 --dtype f32"
g() { grep -E '^dot' "$1" | awk '{print $4, $5, $6}' | tr '\n' ' '; }
$B bench matmul $T --sizes 4096 > $R/default.txt 2>&1; echo "default: $(g $R/default.txt)"
for cfg in 2,2,8,3 2,2,8,4 2,2,8,5 2,2,8,6 2,2,8,7 2,2,8,8 2,2,16,5 2,2,16,6 1,2,8,5 1,2,8,6 2,1,8,5; do for form in batch kernel; do
  NXVK_DOT_VEC=$cfg NXVK_DOT_SPLIT=$form $B bench matmul $T --sizes 128 > $R/$cfg-$form.txt 2>&1
  echo "$cfg $form: $(g $R/$cfg-$form.txt)"
done; done
cd $OUT && tar czf exp7.tgz r && rm -rf r
