#!/bin/sh
# scripts/gpu-sass.sh - what NVIDIA's driver made of our kernels, on a machine
# with no Vulkan profiler.  Three steps, because the GPU machine has
# nvdisasm (CUDA 13) but no zstd, and this one has zstd but no nvdisasm:
#
#   there: scripts/gpu-sass.sh build   each kernel of interest built into a
#          pipeline cache of its own ($OUT/cache-NAME, with NXVK_KERNEL_STATS:
#          build-NAME.txt gives registers and code size per pipeline)
#   here:  scripts/gpu-sass.sh extract DIR   the code of every pipeline in
#          DIR/cache-*/ written to sass-in/NAME-INDEX-SIZE.bin (untracked, so
#          the device tool carries it)
#   there: scripts/gpu-sass.sh dis     sass-in/*.bin disassembled into $OUT
#
# The driver's blob holds zstd frames, each a container ("NVDA...") whose raw
# SASS starts at the 32-bit field at 0x50 plus 8 and is as long as the field
# at 0x4c (driver 580.159.04; the sizes match the Binary Size statistic).
# Build through the bundle (scripts/bundle.sh).
B=${B:-bundle/run.sh}
S=${S:-4096}      # the square size; smaller for a try on lavapipe
O=${OUT:-/tmp}
T="--min-time 0.05 --warmup 0.05"
build() {   # NAME ENV... CMD...
  name=$1; shift
  env NXVK_CACHE_DIR="$O/cache-$name" NXVK_KERNEL_STATS=1 "$@" > "$O/build-$name.txt" 2>&1
}
case "${1:-}" in
build)
  mkdir -p "$O"
  build f64 $B bench matmul --variant vec --sizes $S --dtype f64 $T
  build f32 $B bench matmul --variant vec --sizes $S --dtype f32 $T
  build odd env NXVK_DOT_SPLIT=batch $B bench matmul --variant vec --sizes 128 --shapes 1000x3000x700 --dtype f32 $T
  build peak $B bench peak --min-time 0.05 --bytes 1M
  ;;
extract)
  mkdir -p sass-in
  python3 - "${2:?gpu-sass.sh extract DIR}" <<'PY'
import glob, struct, subprocess, sys
for blob_path in sorted(glob.glob(sys.argv[1] + '/cache-*/pipeline-*.bin')):
    name = blob_path.split('cache-')[-1].split('/')[0]
    blob = open(blob_path, 'rb').read()
    at, n = blob.find(b'\x28\xb5\x2f\xfd'), 0
    while at >= 0:   # zstd stops at the frame's end and complains of the rest
        d = subprocess.run(['zstd', '-d', '-c'], input=blob[at:], capture_output=True).stdout
        if d[:4] == b'NVDA' and len(d) > 0x54:
            size, off = struct.unpack_from('<II', d, 0x4c)
            path = 'sass-in/%s-%d-%d.bin' % (name, n, size)
            open(path, 'wb').write(d[off + 8:off + 8 + size])
            print(path)
            n += 1
        at = blob.find(b'\x28\xb5\x2f\xfd', at + 4)
PY
  ;;
dis)
  mkdir -p "$O"
  dis=$(command -v nvdisasm || ls /usr/local/cuda*/bin/nvdisasm 2>/dev/null | head -1)
  [ -n "$dis" ] || { echo "gpu-sass.sh: no nvdisasm here" >&2; exit 1; }
  for f in sass-in/*.bin; do
    b=$(basename "$f" .bin)
    "$dis" -b SM90 "$f" > "$O/$b.sass" 2>&1
    # the instructions alone, one per line, for counting
    grep -E '^\s+/\*[0-9a-f]{4}\*/' "$O/$b.sass" | sed 's/\/\*[0-9a-f]*\*\/ *//; s/;.*//' > "$O/$b.ins"
  done
  ;;
*)
  echo "usage: scripts/gpu-sass.sh build | extract DIR | dis" >&2
  exit 2
  ;;
esac
