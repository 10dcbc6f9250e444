#!/usr/bin/env bash
# tests/hardening/test_tuning.sh - every tuning variable (nxvk(1)
# ENVIRONMENT) is checked when the device opens: a malformed value, or one
# that does not suit the device or the kernel, is one line `nxvk: error:
# NAME=...` with exit status 2, never a crash, a corrupted heap or a wrong
# result.  The cases run on ./nxvk and on ./nxvk-asan (built here with
# `make asan`, as test_sanitizers.sh does), where any sanitizer report fails
# them.  A value that suits is taken, and the product stays right.
set -u
cd "$(dirname "$0")/../.."
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. tests/tap.sh
export NXVK_CACHE_DIR=$T/cache

A='{"dtype":"f32","shape":[5,3],"data":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15]}'
B='{"dtype":"f32","shape":[3,4],"data":[1,-2,3,-4,5,-6,7,-8,9,-10,11,-12]}'

# whether the device has f16 x f16 -> f32 cooperative matrices (True / False)
COOPMAT=$(./nxvk info --json 2>/dev/null | /usr/bin/python3 -c 'import json,sys; d=json.load(sys.stdin); d=d["devices"][0] if isinstance(d,dict) and "devices" in d else (d[0] if isinstance(d,list) else d); print(d.get("features",{}).get("coopmat_f16_f32"))' 2>/dev/null)

sanitizer_report() { grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|SUMMARY: .*Sanitizer' "$1"; }

# refused BIN DESC VAR=VALUE: exit 2, exactly one line naming VAR
refused() {
  local bin=$1 desc=$2 setting=$3 var=${3%%=*}
  env "$setting" timeout 120 "$bin" run --op dot --attrs '{"variant":"regtile"}' --check "$A" "$B" >"$T/out" 2>"$T/err"
  local rc=$? lines; lines=$(grep -c '' "$T/err")
  if [ "$rc" -eq 2 ] && [ "$lines" -eq 1 ] && grep -q "^nxvk: error: $var=" "$T/err" && ! sanitizer_report "$T/err"; then
    ok "$desc: $(cat "$T/err")"
  else
    not_ok "$desc" "exit $rc (want 2), $lines stderr lines (want 1 naming $var)" "$(head -c 800 "$T/err")"
  fi
}

# taken BIN DESC VAR=VALUE [OP ATTRS]: exit 0 and --check passes
taken() {
  local bin=$1 desc=$2 setting=$3 op=${4:-dot} attrs=${5:-'{"variant":"regtile"}'}
  local args=("$A" "$B") sets
  [ "$op" = dot ] || args=("$A")
  read -ra sets <<<"$setting"   # one or more VAR=VALUE, space-separated
  [ ${#sets[@]} -gt 0 ] || sets=("$setting")
  env "${sets[@]}" timeout 120 "$bin" run --op "$op" --attrs "$attrs" --check "${args[@]}" >"$T/out" 2>"$T/err"
  local rc=$?
  if [ "$rc" -eq 0 ] && grep -q '^check result.*: ok' "$T/out" && ! sanitizer_report "$T/err"; then
    ok "$desc"
  else
    not_ok "$desc" "exit $rc" "$(head -c 600 "$T/err")" "$(head -c 300 "$T/out")"
  fi
}

cases() {
  local bin=$1 tag=$2
  # the three that used to die by SIGFPE, corrupt the heap, or return garbage with exit 0
  refused "$bin" "$tag NXVK_DOT_TILES with BM = BN = 0 (was SIGFPE)" NXVK_DOT_TILES=0,0,16,4,4
  refused "$bin" "$tag NXVK_DOT_TILES with BK = 0 and 65536-row tiles (was a corrupted heap)" NXVK_DOT_TILES=65536,65536,0,1,1
  refused "$bin" "$tag NXVK_DOT_TILES with 64 x 64 sums an invocation (was garbage, exit 0)" NXVK_DOT_TILES=64,64,16,64,64
  refused "$bin" "$tag NXVK_DOT_TILES past the device's workgroup size" NXVK_DOT_TILES=256,256,16,1,1
  refused "$bin" "$tag NXVK_DOT_TILES past the device's shared memory" NXVK_DOT_TILES=256,256,64,8,8
  refused "$bin" "$tag NXVK_DOT_TILES with four numbers" NXVK_DOT_TILES=64,64,16,4
  refused "$bin" "$tag NXVK_DOT_TILES with a trailing comma" NXVK_DOT_TILES=64,64,16,4,4,
  refused "$bin" "$tag NXVK_DOT_TILES with a number past 65536" NXVK_DOT_TILES=99999999999999999999,64,16,4,4
  refused "$bin" "$tag NXVK_DOT_VEC with BK not a multiple of 4" NXVK_DOT_VEC=1,1,6
  refused "$bin" "$tag NXVK_DOT_VEC with S = 0" NXVK_DOT_VEC=1,1,8,0
  refused "$bin" "$tag NXVK_DOT_VEC past shared memory" NXVK_DOT_VEC=8,8,64
  refused "$bin" "$tag NXVK_DOT_NT not 128 or 256" NXVK_DOT_NT=64
  refused "$bin" "$tag NXVK_DOT_ALIGNED not 0 or 1" NXVK_DOT_ALIGNED=yes
  refused "$bin" "$tag NXVK_DOT_GROUP 0" NXVK_DOT_GROUP=0
  refused "$bin" "$tag NXVK_DOT_GROUP past 64" NXVK_DOT_GROUP=65
  refused "$bin" "$tag NXVK_DOT_FRAG not 0 or 1" NXVK_DOT_FRAG=2
  refused "$bin" "$tag NXVK_DOT_KU odd" NXVK_DOT_KU=3
  refused "$bin" "$tag NXVK_DOT_KU past 32" NXVK_DOT_KU=64
  refused "$bin" "$tag NXVK_DOT_LW not 2, 4, 8 or 16" NXVK_DOT_LW=32
  refused "$bin" "$tag NXVK_DOT_CT not 0 or 1" NXVK_DOT_CT=2
  refused "$bin" "$tag NXVK_DOT_XB not 0, 1 or 2" NXVK_DOT_XB=3
  refused "$bin" "$tag NXVK_DOT_XS past 31" NXVK_DOT_XS=32
  refused "$bin" "$tag NXVK_DOT_COOPMAT with six numbers" NXVK_DOT_COOPMAT=2,2,4,4,32,16
  refused "$bin" "$tag NXVK_DOT_COOPMAT with FR = 9 (or no cooperative matrices)" NXVK_DOT_COOPMAT=2,2,9,4,32
  refused "$bin" "$tag NXVK_DOT_COOPMAT_SPLIT past 16" NXVK_DOT_COOPMAT_SPLIT=17
  refused "$bin" "$tag NXVK_DOT_COOPMAT_STAGES not 1 or 2" NXVK_DOT_COOPMAT_STAGES=3
  refused "$bin" "$tag NXVK_DOT_COOPMAT_PREFETCH not 1 or 2" NXVK_DOT_COOPMAT_PREFETCH=0
  refused "$bin" "$tag NXVK_DOT_COOPMAT_GROUP past 64" NXVK_DOT_COOPMAT_GROUP=65
  refused "$bin" "$tag NXVK_DOT_COOPMAT_GROUP with a suffix" NXVK_DOT_COOPMAT_GROUP=8x
  refused "$bin" "$tag NXVK_DOT_COOPMAT_ORDER past 3" NXVK_DOT_COOPMAT_ORDER=4
  refused "$bin" "$tag NXVK_DOT_COOPMAT_EMU not 0 or 1" NXVK_DOT_COOPMAT_EMU=yes
  refused "$bin" "$tag NXVK_COOPMAT_KHR not 0 or 1" NXVK_COOPMAT_KHR=2
  refused "$bin" "$tag NXVK_DOT_COOPMAT_DIAG past 2" NXVK_DOT_COOPMAT_DIAG=3
  if [ "$COOPMAT" = False ]; then
    # no cooperative matrices: the refusal names the knob that is set, and only it
    refused "$bin" "$tag NXVK_DOT_COOPMAT_DIAG=1 without cooperative matrices (named, no other knob)" NXVK_DOT_COOPMAT_DIAG=1
    if grep -q '_STAGES\|_EMU' "$T/err"; then not_ok "$tag ... the DIAG refusal names no unset knob" "$(cat "$T/err")"; else
      ok "$tag ... the DIAG refusal names no unset knob"; fi
    refused "$bin" "$tag NXVK_DOT_COOPMAT_STAGES=2 without cooperative matrices" NXVK_DOT_COOPMAT_STAGES=2
  fi
  refused "$bin" "$tag NXVK_DOT_SPLIT not a form" NXVK_DOT_SPLIT=batches
  refused "$bin" "$tag NXVK_EW_UNROLL past 8" NXVK_EW_UNROLL=9
  refused "$bin" "$tag NXVK_EW_UNROLL with a suffix" NXVK_EW_UNROLL=4x
  refused "$bin" "$tag NXVK_EW_BLOCKED not 0 or 1" NXVK_EW_BLOCKED=yes
  refused "$bin" "$tag NXVK_REDUCE_FOLD not 0 or 1" NXVK_REDUCE_FOLD=2
  refused "$bin" "$tag NXVK_REDUCE_ADD not a form" NXVK_REDUCE_ADD=quick
  refused "$bin" "$tag NXVK_REDUCE_VEC past 4" NXVK_REDUCE_VEC=5
  refused "$bin" "$tag NXVK_REDUCE_PARTIALS not a power of two" NXVK_REDUCE_PARTIALS=1000
  refused "$bin" "$tag NXVK_REDUCE_WG not a power of two" NXVK_REDUCE_WG=100
  refused "$bin" "$tag NXVK_POOL_CAP not a size" NXVK_POOL_CAP=lots
  refused "$bin" "$tag NXVK_STAGING not 0 or 1" NXVK_STAGING=on
  refused "$bin" "$tag NXVK_GROUP_SUBMIT not 0 or 1" NXVK_GROUP_SUBMIT=yes
  refused "$bin" "$tag NXVK_QUEUES over 16" NXVK_QUEUES=17
  refused "$bin" "$tag NXVK_QUEUES 0" NXVK_QUEUES=0
  refused "$bin" "$tag NXVK_GROUP_ROUNDS 0" NXVK_GROUP_ROUNDS=0
  refused "$bin" "$tag NXVK_WAIT_POLL_GAP_US over 1000" NXVK_WAIT_POLL_GAP_US=1001
  refused "$bin" "$tag NXVK_CONV_DIRECT not 0 or 1" NXVK_CONV_DIRECT=on
  refused "$bin" "$tag NXVK_CONV_COOPMAT not 0 or five numbers" NXVK_CONV_COOPMAT=4,1,2
  refused "$bin" "$tag NXVK_CONV_COOPMAT_EMU not 0 or 1" NXVK_CONV_COOPMAT_EMU=yes
  refused "$bin" "$tag NXVK_F16_CVT not sw or hw" NXVK_F16_CVT=fast
  refused "$bin" "$tag NXVK_DOT_MV with R = 9" NXVK_DOT_MV=9,0,0,0
  refused "$bin" "$tag NXVK_DOT_MV with WG not a power of two" NXVK_DOT_MV=0,100,0,0
  refused "$bin" "$tag NXVK_DOT_MV with three numbers" NXVK_DOT_MV=1,2,3
  refused "$bin" "$tag NXVK_DOT_MV with T = 9" NXVK_DOT_MV=4,256,1,0,0,1,9
  refused "$bin" "$tag NXVK_DOT_MV with B = 3" NXVK_DOT_MV=4,256,1,0,0,1,2,3
  refused "$bin" "$tag NXVK_DOT_MV with B = 2 and no T" NXVK_DOT_MV=4,256,1,0,0,1,0,2
  refused "$bin" "$tag NXVK_DOT_MV with C = 3" NXVK_DOT_MV=4,256,1,0,0,1,2,1,3
  refused "$bin" "$tag NXVK_DOT_MV with C = 2 and no T" NXVK_DOT_MV=4,256,1,0,0,1,0,1,2
  refused "$bin" "$tag NXVK_DOT_MV with H = 3" NXVK_DOT_MV=4,256,1,0,0,1,2,1,1,3
  refused "$bin" "$tag NXVK_DOT_MV with H = 2 and no T" NXVK_DOT_MV=4,256,1,0,0,1,0,0,0,2
  refused "$bin" "$tag NXVK_DOT_MV with C = 4 and H = 2 (8 parts)" NXVK_DOT_MV=4,256,1,0,0,1,2,1,4,2
  refused "$bin" "$tag NXVK_DOT_MV with eleven numbers" NXVK_DOT_MV=4,256,1,0,0,1,2,1,1,1,1
  refused "$bin" "$tag NXVK_DOT_MV neither numbers nor off" NXVK_DOT_MV=fast
  refused "$bin" "$tag NXVK_DOT_MVC with W = 3" NXVK_DOT_MVC=3,0,0,0
  refused "$bin" "$tag NXVK_DOT_MVC with U not a power of two" NXVK_DOT_MVC=0,3,0,0
  refused "$bin" "$tag NXVK_DOT_MVC with P = 3" NXVK_DOT_MVC=0,0,0,0,3
  refused "$bin" "$tag NXVK_DOT_MVC with F = 4" NXVK_DOT_MVC=0,0,0,0,0,4
  refused "$bin" "$tag NXVK_DOT_MVC neither numbers nor off" NXVK_DOT_MVC=fast
  refused "$bin" "$tag NXVK_DOT_MVC_CM with FC = 3" NXVK_DOT_MVC_CM=3,0
  refused "$bin" "$tag NXVK_DOT_MVC_CM with PF = 3" NXVK_DOT_MVC_CM=0,3
  refused "$bin" "$tag NXVK_DOT_MVC_CM with LD = 3" NXVK_DOT_MVC_CM=0,0,3
  refused "$bin" "$tag NXVK_DOT_MVC_CM with E = 2" NXVK_DOT_MVC_CM=0,0,0,2
  refused "$bin" "$tag NXVK_DOT_MVC_CM with F = 4" NXVK_DOT_MVC_CM=0,0,0,0,4
  refused "$bin" "$tag NXVK_DOT_MVC_CM with T = 3" NXVK_DOT_MVC_CM=0,0,0,0,0,3
  refused "$bin" "$tag NXVK_DOT_MVC_CM with seven numbers" NXVK_DOT_MVC_CM=0,0,0,0,0,2,1
  refused "$bin" "$tag NXVK_DOT_MVR with L = 3" NXVK_DOT_MVR=3,0,0,0
  refused "$bin" "$tag NXVK_DOT_MVB with CG = 3" NXVK_DOT_MVB=3,0,0,0
  refused "$bin" "$tag NXVK_DOT_MVB with F = 3" NXVK_DOT_MVB=2,0,0,0,0,3
  refused "$bin" "$tag NXVK_DOT_MVB with three fields" NXVK_DOT_MVB=2,0,0
  refused "$bin" "$tag NXVK_DOT_MVR with P = 3" NXVK_DOT_MVR=4,2,2,2,256,0,3
  refused "$bin" "$tag NXVK_DOT_MVR_CM with KS = 3" NXVK_DOT_MVR_CM=4,3
  refused "$bin" "$tag NXVK_DOT_MVR_CM with F = 4" NXVK_DOT_MVR_CM=4,1,128,0,0,2,4
  refused "$bin" "$tag NXVK_SCAN not a kernel" NXVK_SCAN=onepass
  refused "$bin" "$tag NXVK_SCATTER_PUT not a form" NXVK_SCATTER_PUT=fast
  refused "$bin" "$tag NXVK_SCAN_WG not a power of two" NXVK_SCAN_WG=100
  refused "$bin" "$tag NXVK_SCAN_ITEMS not a multiple of 4" NXVK_SCAN_ITEMS=6
  refused "$bin" "$tag NXVK_SCAN_ADD not a form" NXVK_SCAN_ADD=quick
  refused "$bin" "$tag NXVK_SCAN_PASS not a pass" NXVK_SCAN_PASS=all
  refused "$bin" "$tag NXVK_SCAN_WIDE neither 0 nor 1" NXVK_SCAN_WIDE=2
  # values that suit are taken, and the result stays right
  taken "$bin" "$tag NXVK_DOT_TILES=8,8,8,8,8 (one invocation a workgroup) is taken" NXVK_DOT_TILES=8,8,8,8,8
  taken "$bin" "$tag NXVK_DOT_TILES=32,16,4,2,4 is taken" NXVK_DOT_TILES=32,16,4,2,4
  taken "$bin" "$tag an empty NXVK_DOT_TILES is unset" NXVK_DOT_TILES=
  taken "$bin" "$tag NXVK_DOT_VEC=1,1,4,2 is taken" NXVK_DOT_VEC=1,1,4,2 dot '{"variant":"vec"}'
  taken "$bin" "$tag NXVK_DOT_ALIGNED=1 is taken (a product of partial tiles keeps the checked kernel)" NXVK_DOT_ALIGNED=1 dot '{"variant":"vec"}'
  taken "$bin" "$tag NXVK_DOT_GROUP=2 is taken" NXVK_DOT_GROUP=2 dot '{"variant":"vec"}'
  taken "$bin" "$tag NXVK_DOT_NT=128 is taken for f32" NXVK_DOT_NT=128 dot '{"variant":"vec"}'
  taken "$bin" "$tag NXVK_DOT_MV=2,64,1,2 is taken" NXVK_DOT_MV=2,64,1,2 dot '{"variant":"skinny"}'
  taken "$bin" "$tag NXVK_DOT_MV=4,256,1,0,0,1,4 (B's tile of 4 sub-tiles) is taken" NXVK_DOT_MV=4,256,1,0,0,1,4 dot '{"variant":"skinny"}'
  taken "$bin" "$tag NXVK_DOT_MV=4,256,1,0,0,1,2,2 (two tiles of B) is taken" NXVK_DOT_MV=4,256,1,0,0,1,2,2 dot '{"variant":"skinny"}'
  taken "$bin" "$tag NXVK_DOT_MV=4,256,1,0,0,1,1,2,2 (B's columns over 2 subgroups) is taken" NXVK_DOT_MV=4,256,1,0,0,1,1,2,2 dot '{"variant":"skinny"}'
  taken "$bin" "$tag NXVK_DOT_MV=4,256,1,0,0,1,1,2,1,2 (over lane halves) is taken" NXVK_DOT_MV=4,256,1,0,0,1,1,2,1,2 dot '{"variant":"skinny"}'
  taken "$bin" "$tag NXVK_DOT_MV=off is taken" NXVK_DOT_MV=off dot '{"variant":"skinny"}'
  taken "$bin" "$tag NXVK_DOT_MVC=2,4,2,64,2 is taken" NXVK_DOT_MVC=2,4,2,64,2 dot '{"variant":"skinny"}'
  taken "$bin" "$tag NXVK_DOT_MVC=off is taken" NXVK_DOT_MVC=off dot '{"variant":"skinny"}'
  taken "$bin" "$tag NXVK_DOT_MVC_CM=4,2 is taken" NXVK_DOT_MVC_CM=4,2 dot '{"variant":"skinny"}'
  taken "$bin" "$tag NXVK_DOT_MVC_CM=4,1,2,1,1,2 (the transposed form's emulation) is taken" NXVK_DOT_MVC_CM=4,1,2,1,1,2 dot '{"variant":"skinny"}'
  taken "$bin" "$tag NXVK_DOT_MVR=2,1,1,2,64,2 is taken" NXVK_DOT_MVR=2,1,1,2,64,2 dot '{}'
  taken "$bin" "$tag NXVK_DOT_MVB=1,64,16,1,2,2 is taken" NXVK_DOT_MVB=1,64,16,1,2,2 dot '{}'
  taken "$bin" "$tag NXVK_DOT_MVB=off is taken" NXVK_DOT_MVB=off dot '{}'
  taken "$bin" "$tag NXVK_EW_UNROLL=3 is taken" NXVK_EW_UNROLL=3 exp '{}'
  taken "$bin" "$tag NXVK_POOL_CAP=1M is taken" NXVK_POOL_CAP=1M
  taken "$bin" "$tag NXVK_GROUP_SUBMIT=0 is taken" NXVK_GROUP_SUBMIT=0
  taken "$bin" "$tag NXVK_QUEUES=3 is taken (lanes share the device's queues)" NXVK_QUEUES=3
  taken "$bin" "$tag NXVK_GROUP_ROUNDS=8 is taken" NXVK_GROUP_ROUNDS=8
  taken "$bin" "$tag NXVK_WAIT_POLL_GAP_US=2 is taken" NXVK_WAIT_POLL_GAP_US=2
  taken "$bin" "$tag NXVK_F16_CVT=sw is taken" NXVK_F16_CVT=sw
  taken "$bin" "$tag NXVK_SCAN=blocks is taken" NXVK_SCAN=blocks cumulative_sum '{"axis":1}'
  taken "$bin" "$tag NXVK_SCATTER_PUT=owned is taken" NXVK_SCATTER_PUT=owned
  taken "$bin" "$tag NXVK_SCAN=lookback is taken" NXVK_SCAN=lookback cumulative_sum '{"axis":1}'
  taken "$bin" "$tag NXVK_SCAN_ITEMS=8 is taken" NXVK_SCAN_ITEMS=8 cumulative_sum '{"axis":1}'
  taken "$bin" "$tag NXVK_SCAN=rts is taken" NXVK_SCAN=rts cumulative_sum '{"axis":1}'
  taken "$bin" "$tag NXVK_SCAN_ADD=exact is taken" "NXVK_SCAN=rts NXVK_SCAN_ADD=exact" cumulative_sum '{"axis":1}'
  taken "$bin" "$tag NXVK_REDUCE_ADD=exact is taken" NXVK_REDUCE_ADD=exact sum '{"axes":[1]}'
  taken "$bin" "$tag NXVK_REDUCE_VEC=2 NXVK_REDUCE_WG=64 NXVK_REDUCE_PARTIALS=16 are taken" \
    "NXVK_REDUCE_VEC=2 NXVK_REDUCE_WG=64 NXVK_REDUCE_PARTIALS=16" sum '{}'
  taken "$bin" "$tag NXVK_SCAN_PASS=scan is taken (the same result)" "NXVK_SCAN=rts NXVK_SCAN_PASS=scan" cumulative_sum '{"axis":1}'
  taken "$bin" "$tag NXVK_SCAN_WIDE=0 is taken (products in range)" NXVK_SCAN_WIDE=0 cumulative_product '{"axis":1}'
}

cases ./nxvk plain

# one `make asan` at a time in this tree (tests/run.sh runs two producers at once)
mkdir -p build
if flock build/asan.lock make -s -j2 asan >"$T/make.log" 2>&1 && [ -x ./nxvk-asan ]; then
  ok "make asan builds ./nxvk-asan"
  export ASAN_OPTIONS="detect_leaks=0:abort_on_error=0:exitcode=86"
  export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:exitcode=88"
  cases ./nxvk-asan asan
else
  not_ok "make asan builds ./nxvk-asan" "$(tail -20 "$T/make.log")"
fi
echo "1..$n"
