#!/bin/sh
# scripts/gpu-power.sh - SM clock, board power and throttle reasons, sampled
# every 100 ms by nvidia-smi while each run below works, printed as one line
# per half second (mean MHz, mean W, share of samples with the software
# power cap, bit 0x4) under the run's own result rows.  For the question
# whether a kernel is slow or the board is holding its clock down.
# Through the bundle (scripts/bundle.sh); B2 = a second build to compare
# (bench/hosts/h100-2026-11-25-power: one whose operands have 8-bit
# mantissas), F64_VEC = other f64 tiles (RB,CB,BK[,S] as NXVK_DOT_VEC takes).
B=${B:-bundle/run.sh}
S=${S:-4096}
MT=${MT:-4}
O=${OUT:-/tmp}
mkdir -p "$O"
trace() {   # NAME ENV/CMD...
  name=$1; shift
  nvidia-smi --query-gpu=clocks.sm,power.draw,clocks_throttle_reasons.active \
    --format=csv,noheader,nounits -lms 100 > "$O/power-$name.csv" 2>&1 &
  p=$!
  "$@" > "$O/run-$name.txt" 2>&1
  kill $p; wait $p 2>/dev/null
  echo "== $name: $*"
  grep -E '^(dot|fma) ' "$O/run-$name.txt"
  python3 - "$O/power-$name.csv" <<'PY'
import sys
rows = []
for line in open(sys.argv[1]):
    f = [x.strip() for x in line.split(',')]
    try:
        rows.append((float(f[0]), float(f[1]), int(f[2], 16)))
    except (ValueError, IndexError):
        pass
for at in range(0, len(rows), 5):
    w = rows[at:at + 5]
    cap = sum(1 for r in w if r[2] & 4) / len(w)
    print('  %4.1fs %5.0f MHz %4.0f W cap %3.0f%%' % (at / 10, sum(r[0] for r in w) / len(w),
          sum(r[1] for r in w) / len(w), 100 * cap))
PY
}
T="--min-time $MT --warmup 0.5"
trace peak $B bench peak --min-time $MT --bytes 1M
trace f64 $B bench matmul --variant vec --sizes $S --dtype f64 $T
trace f32 $B bench matmul --variant vec --sizes $S --dtype f32 $T
if [ -n "${B2:-}" ]; then
  trace f64-b2 $B2 bench matmul --variant vec --sizes $S --dtype f64 $T
  trace f32-b2 $B2 bench matmul --variant vec --sizes $S --dtype f32 $T
fi
for v in ${F64_VEC:-}; do   # commas left out of file names: the device tool skips them
  trace "f64-$(echo "$v" | tr , -)" env NXVK_DOT_VEC=$v $B bench matmul --variant vec --sizes $S --dtype f64 $T
done
