#!/usr/bin/env bash
# tests/hardening/test_validation.sh - the representative subset
# (subset.sh) on ./nxvk with NXVK_VALIDATE=1: the Khronos validation layer
# watches every Vulkan call, and any message makes nxvk fail (nxvk(1)); a
# case passes with its usual exit status and no validation message.
set -u
cd "$(dirname "$0")/../.."
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
n=0
. tests/hardening/subset.sh
BIN=${NXVK:-$PWD/nxvk}
[ -x "$BIN" ] || { echo "1..0 # SKIP $BIN not built"; exit 0; }
if [ ! -f /usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json ] &&
  [ ! -f /etc/vulkan/explicit_layer.d/VkLayer_khronos_validation.json ]; then
  echo "not ok 1 - the Khronos validation layer is installed (vulkan-validationlayers)"
  echo "1..1"
  exit 1
fi
export NXVK_VALIDATE=1
export NXVK_CACHE_DIR=$T/cache

clean() {
  if grep -qiE 'validation (message|layer|error)|VUID-|Validation Error' "$1"; then
    grep -m3 -iE 'validation|VUID-' "$1"
    return 1
  fi
  return 0
}

# the layer is really on: NXVK_VALIDATE=1 loads it into the process
# (its name shows in the loader's debug output), so a clean run means
# something
VK_LOADER_DEBUG=layer timeout 120 "$BIN" run --op abs '{"dtype":"f32","data":[1]}' >"$T/out" 2>"$T/err"
if grep -q 'Insert instance layer "VK_LAYER_KHRONOS_validation"' "$T/err"; then ok "NXVK_VALIDATE=1 loads VK_LAYER_KHRONOS_validation"; else
  not_ok "NXVK_VALIDATE=1 loads VK_LAYER_KHRONOS_validation" "$(head -c 800 "$T/err")"; fi

run_subset

# the skinny products' kernels share one launcher (dot_mv.c) whose bindings
# must cover every kernel's, the folding one's fourth included: f16 on the
# tensor-core rows form's emulation with k split over 3 workgroups, summed
# by a second pass (F 2) and by the last workgroup (F 1), and unsplit
/usr/bin/python3 -c "
import numpy as np
rng = np.random.default_rng(5)
np.save('$T/sa.npy', rng.standard_normal((100, 1024)).astype(np.float16))
np.save('$T/sb.npy', rng.standard_normal((1024, 5)).astype(np.float16))"
for cm in 1,4,256,3,1,2,2 1,4,256,3,1,2,1 4,1,128,1,1; do
  run_case "skinny f16 dot on the tensor-core form's emulation (NXVK_DOT_MVR_CM=$cm) --check" 0 \
    env NXVK_DOT_MVR_CM=$cm "$BIN" run --op dot --check "$T/sa.npy" "$T/sb.npy"
done
# the columns forms' fold (mvfold.glsl): dot_mvc and the tensor-core columns
# form's emulation, k split over 3 workgroups, summed by the last workgroup
/usr/bin/python3 -c "
import numpy as np
rng = np.random.default_rng(6)
np.save('$T/ca.npy', rng.standard_normal((16, 1024)).astype(np.float16))
np.save('$T/cb.npy', rng.standard_normal((1024, 256)).astype(np.float16))"
for cm in 0,0,0,0,1 0,0,2,1,1; do
  run_case "skinny f16 columns dot, split K folded (NXVK_DOT_MVC_CM=$cm) --check" 0 \
    env NXVK_DOT_MVC=0,0,3,0,0,1 NXVK_DOT_MVC_CM=$cm "$BIN" run --op dot --check "$T/ca.npy" "$T/cb.npy"
done
# the tensor-core columns form's transposed emulation (C^T = B^T A^T, m = 8): B staged and folded, B from memory
# and summed by a second pass, FC 8 PF 2 over a last block of one fragment
/usr/bin/python3 -c "
import numpy as np
rng = np.random.default_rng(7)
np.save('$T/ma.npy', rng.standard_normal((8, 1024)).astype(np.float16))
np.save('$T/mb.npy', rng.standard_normal((1024, 272)).astype(np.float16))"
for cm in 0,0,2,1,1 2,2,1,1,2 8,2,2,1,1,2; do
  run_case "skinny f16 m = 8 on the transposed tensor-core form's emulation, split K (NXVK_DOT_MVC_CM=$cm) --check" 0 \
    env NXVK_DOT_MVC=0,0,3,0 NXVK_DOT_MVC_CM=$cm NXVK_KERNEL_STATS=1 "$BIN" run --op dot --check "$T/ma.npy" "$T/mb.npy"
  if grep -qE '^dot_mvcm_t16x8x16c[0-9]+p[0-9]+l[01]e_f16 ' "$T/err"; then ok "... ran dot_mvcm_t16x8x16...e_f16 ($cm)"; else
    not_ok "... ran dot_mvcm_t16x8x16...e_f16 ($cm)" "$(grep -m3 dot_ "$T/err")"; fi
done
# m = 5: A^T staged with zero columns (the kernel's z), split K folded
/usr/bin/python3 -c "
import numpy as np
rng = np.random.default_rng(8)
np.save('$T/pa.npy', rng.standard_normal((2, 5, 1024)).astype(np.float16))
np.save('$T/pb.npy', rng.standard_normal((2, 1024, 272)).astype(np.float16))"
run_case "skinny f16 m = 5 on the transposed form's emulation, A^T zero-padded, split K folded --check" 0 \
  env NXVK_DOT_MVC=0,0,3,0 NXVK_DOT_MVC_CM=8,2,2,1,1,2 NXVK_KERNEL_STATS=1 "$BIN" run --op dot --check "$T/pa.npy" \
  "$T/pb.npy"
if grep -qE '^dot_mvcm_t16x8x16c8p2l1ze_f16 ' "$T/err"; then ok "... ran dot_mvcm_t16x8x16c8p2l1ze_f16"; else
  not_ok "... ran dot_mvcm_t16x8x16c8p2l1ze_f16" "$(grep -m3 dot_ "$T/err")"; fi
# dot_mv.comp's rows form with B's tile of T sub-tiles (NXVK_DOT_MV's 7th
# field): f32 n = 16 (B staged in 16-byte vectors) split over 2 chunks and
# unsplit, one tile of B or two (8th field 2), n = 9 (value by value), A's
# next sub-tile prefetched (P 1) or not
/usr/bin/python3 -c "
import numpy as np
rng = np.random.default_rng(6)
np.save('$T/ta.npy', rng.standard_normal((300, 1001)).astype(np.float32))
np.save('$T/tb.npy', rng.standard_normal((1001, 16)).astype(np.float32))
np.save('$T/tc.npy', rng.standard_normal((1001, 9)).astype(np.float32))"
for mv in 4,256,1,2,0,1,4 4,256,1,1,0,0,2 4,256,1,2,0,1,2,2; do
  run_case "skinny f32 n = 16 on dot_mv's B tile of sub-tiles (NXVK_DOT_MV=$mv) --check" 0 \
    env NXVK_DOT_MV=$mv "$BIN" run --op dot --check "$T/ta.npy" "$T/tb.npy"
done
run_case "skinny f32 n = 9 on dot_mv's B tile of sub-tiles (NXVK_DOT_MV=4,64,1,2,0,1,3) --check" 0 \
  env NXVK_DOT_MV=4,64,1,2,0,1,3 "$BIN" run --op dot --check "$T/ta.npy" "$T/tc.npy"
# B's columns split per lane (9th field C: subgroups on the same rows; 10th H:
# lane halves, A's vectors by shuffles), n = 16 split over 2 chunks and n = 9
for mv in 4,256,1,2,0,1,1,2,2 4,256,1,2,0,1,1,2,1,2 4,256,1,0,0,1,2,2,2,2 8,512,1,0,0,1,1,2,4; do
  run_case "skinny f32 n = 16 with B's columns split (NXVK_DOT_MV=$mv) --check" 0 \
    env NXVK_DOT_MV=$mv "$BIN" run --op dot --check "$T/ta.npy" "$T/tb.npy"
done
run_case "skinny f32 n = 9 with B's columns over lane halves (NXVK_DOT_MV=3,512,1,0,0,1,4,0,0,2) --check" 0 \
  env NXVK_DOT_MV=3,512,1,0,0,1,4,0,0,2 "$BIN" run --op dot --check "$T/ta.npy" "$T/tc.npy"
echo "1..$n"
