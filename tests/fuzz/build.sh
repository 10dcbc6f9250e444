#!/usr/bin/env bash
# tests/fuzz/build.sh - build the fuzz targets (tests/fuzz/fuzz_*.c).
#
#   tests/fuzz/build.sh [fuzz|replay|cov|all] [TARGET...]
#
#   fuzz    libFuzzer binaries build/fuzz/bin/fuzz_TARGET, with clang
#           (-fsanitize=fuzzer,address,undefined); the engine's sources are
#           compiled once more, with libFuzzer's edge counters, into
#           build/fuzz/obj.
#   replay  build/fuzz/bin/replay_TARGET: tests/fuzz/replay.c's main() around
#           the same target, the engine compiled with gcc (CC) and
#           -fsanitize=address,undefined,float-cast-overflow into
#           build/fuzz/obj-replay, for CI without libFuzzer.
#   cov     build/fuzz/bin/cov_TARGET: replay.c with clang's source-based
#           coverage (tests/fuzz/coverage.sh reports it per source file).
#   all     fuzz and replay (the default).
#
# Needs `make` to have run once (build/gen/*.c: embedded SPIR-V, GLSL,
# limits).  The engine links whole: Vulkan is loaded at run time (volk),
# and no target opens a device.  CLANG, CC, JOBS override the tools.
# FUZZ_CFLAGS adds flags to the fuzz build (its own object folder), e.g.
# -fsanitize-recover=float-cast-overflow to fuzz on past a known report.
# FUZZ_SRC=DIR takes the engine's sources from DIR/src instead (a copy with
# proposed fixes applied, to fuzz past a known bug, or to check that the
# regression cases pass with them).  Either puts the objects in
# build/fuzz/obj-custom (obj-replay-custom) and the binaries in
# build/fuzz/bin-custom.
set -euo pipefail
cd "$(dirname "$0")/../.."
mode=${1:-all}
case "$mode" in fuzz | replay | cov | all) shift || true ;; *) mode=all ;; esac
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in tests/fuzz/fuzz_*.c; do t=${f#tests/fuzz/fuzz_}; targets+=("${t%.c}"); done
fi
CLANG=${CLANG:-clang}
CC=${CC:-cc}
JOBS=${JOBS:-2}
BIN=build/fuzz/bin
mkdir -p "$BIN"

CSTD="-std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE"
INC="-Isrc -Ibuild/gen"
GLSLANG_LIBS="-lglslang -lSPIRV -lglslang-default-resource-limits -lMachineIndependent
  -lOSDependent -lGenericCodeGen -lOGLCompiler -lSPIRV-Tools-opt -lSPIRV-Tools -lstdc++"
LIBS="-lcjson -lcsv -lz $GLSLANG_LIBS -lpthread -ldl -lm"
# the generated sources the Makefile links into the engine ($(B)/gen/*.o of OBJ_CORE)
# (asked of make itself, so names built from variables, such as the run-time
# kernels' src_*.o, are expanded)
GEN=$(printf 'print-gen-objs:\n\t@echo $(filter $(B)/gen/%%,$(OBJ_CORE))\n' |
  make -s --no-print-directory -f Makefile -f - print-gen-objs | tr ' ' '\n' |
  sed -nE 's|^build/obj/gen/(.*)\.o$|build/gen/\1.c|p' | tr '\n' ' ')
[ -n "$GEN" ] || { echo "build.sh: cannot find OBJ_CORE's generated sources in the Makefile" >&2; exit 1; }
engine_sources() {
  ls src/core/*.c src/vk/*.c src/ops/*.c src/io/*.c
  echo src/cli/port_frame.c
}

# make deletes the run-time kernels' src_*.c as intermediates: have it make them again
# shellcheck disable=SC2086
make -s $GEN >/dev/null 2>&1 || true
for g in $GEN; do
  [ -f "$g" ] || { echo "build.sh: $g is missing: run make first" >&2; exit 1; }
done

# Recompile an object when its source, or any header it may include, is newer.
newest_header=$(ls -t src/*.h src/*/*.h 2>/dev/null | head -1)
stale() { # obj src
  [ ! -f "$1" ] || [ "$2" -nt "$1" ] || [ "$newest_header" -nt "$1" ]
}

# compile_engine COMPILER OBJDIR SRCROOT FLAGS...: the engine's sources
# (from SRCROOT) and the generated ones into OBJDIR/libnxvk.a.
compile_engine() {
  local cc=$1 obj=$2 srcroot=$3; shift 3
  local flags="$cc $*"
  mkdir -p "$obj"
  # other flags than last time: everything again
  if [ "$(cat "$obj/flags" 2>/dev/null)" != "$flags" ]; then
    rm -f "$obj"/*.o "$obj"/*.a
    echo "$flags" >"$obj/flags"
  fi
  local todo=() objs=() src o
  while read -r src; do
    o=$obj/$(echo "$src" | tr / _).o
    objs+=("$o")
    case "$src" in build/*) ;; *) src=$srcroot/$src ;; esac
    if stale "$o" "$src"; then todo+=("$src:$o"); fi
  done < <(engine_sources; for g in $GEN; do echo "$g"; done)
  if [ ${#todo[@]} -gt 0 ]; then
    echo "build.sh: compiling ${#todo[@]} engine sources into $obj"
    printf '%s\n' "${todo[@]}" | xargs -P "$JOBS" -I{} sh -c \
      'src=${1%%:*}; o=${1#*:}; '"$flags"' -w -c -o "$o" "$src" || exit 255' _ {}
    rm -f "$obj/libnxvk.a"
  fi
  if [ ! -f "$obj/libnxvk.a" ]; then ar rcs "$obj/libnxvk.a" "${objs[@]}"; fi
}

build_fuzz() {
  local obj=build/fuzz/obj extra=${FUZZ_CFLAGS:-} srcroot=${FUZZ_SRC:-.} bin=$BIN
  if [ -n "$extra" ] || [ "$srcroot" != . ]; then obj=build/fuzz/obj-custom bin=build/fuzz/bin-custom; fi
  mkdir -p "$bin"
  local san="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
  # shellcheck disable=SC2086
  compile_engine "$CLANG" "$obj" "$srcroot" $CSTD -O1 -g -fno-omit-frame-pointer $san \
    -fsanitize=fuzzer-no-link $extra -I$srcroot/src $INC
  for t in "${targets[@]}"; do
    echo "build.sh: $bin/fuzz_$t"
    # shellcheck disable=SC2086
    $CLANG $CSTD -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer $san $extra -Wall -Wextra -Werror \
      -I$srcroot/src $INC -o "$bin/fuzz_$t" "tests/fuzz/fuzz_$t.c" "$obj/libnxvk.a" $LIBS
  done
}

# Source-based coverage of a corpus: replay.c around the target, no
# sanitizers, clang's -fprofile-instr-generate -fcoverage-mapping.
build_cov() {
  local obj=build/fuzz/obj-cov cov="-fprofile-instr-generate -fcoverage-mapping"
  # shellcheck disable=SC2086
  compile_engine "$CLANG" "$obj" . $CSTD -O1 -g $cov $INC
  for t in "${targets[@]}"; do
    echo "build.sh: $BIN/cov_$t"
    # shellcheck disable=SC2086
    $CLANG $CSTD -O1 -g $cov -Wall -Wextra -Werror $INC -o "$BIN/cov_$t" \
      tests/fuzz/replay.c "tests/fuzz/fuzz_$t.c" "$obj/libnxvk.a" $LIBS
  done
}

# The replay drivers: gcc (CC), ASan + UBSan without recovery, and
# float-cast-overflow, which gcc leaves out of -fsanitize=undefined (a double
# out of an integer's range converted to it: undefined behaviour).
build_replay() {
  local obj=build/fuzz/obj-replay srcroot=${FUZZ_SRC:-.} bin=$BIN
  if [ "$srcroot" != . ]; then obj=build/fuzz/obj-replay-custom bin=build/fuzz/bin-custom; fi
  mkdir -p "$bin"
  local san="-fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all"
  # shellcheck disable=SC2086
  compile_engine "$CC" "$obj" "$srcroot" $CSTD -O1 -g -fno-omit-frame-pointer $san -I$srcroot/src $INC
  for t in "${targets[@]}"; do
    echo "build.sh: $bin/replay_$t"
    # shellcheck disable=SC2086
    $CC $CSTD -O1 -g -fno-omit-frame-pointer $san -Wall -Wextra -Werror -I$srcroot/src $INC \
      -o "$bin/replay_$t" tests/fuzz/replay.c "tests/fuzz/fuzz_$t.c" "$obj/libnxvk.a" $LIBS
  done
}

case "$mode" in
  fuzz) build_fuzz ;;
  replay) build_replay ;;
  cov) build_cov ;;
  all) build_fuzz; build_replay ;;
esac
