#!/usr/bin/env bash
# tests/fuzz/fuzz.sh - one fuzzing session of one target (libFuzzer).
#
#   tests/fuzz/fuzz.sh TARGET [SECONDS] [-- LIBFUZZER-FLAGS...]
#
# Inputs: the committed corpus tests/fuzz/corpus/TARGET and fresh seeds
# (make_seeds.py); new inputs go to build/fuzz/work/TARGET, crashes to
# build/fuzz/artifacts/TARGET/, the log to build/fuzz/logs/TARGET.log.
# Runs niced, one job, one worker: the machine is shared.  FUZZ_BIN picks
# another binary folder (build/fuzz/bin-custom: see build.sh).
#   tests/fuzz/fuzz.sh TARGET merge   minimizes work + seeds + corpus into
#                                     tests/fuzz/corpus/TARGET (-merge=1), at
#                                     most 199 files (FUZZ_CORPUS_CAP)
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
t=${1:?usage: fuzz.sh TARGET [SECONDS|merge]}
secs=${2:-600}
shift $(( $# >= 2 ? 2 : 1 ))
[ "${1:-}" = "--" ] && shift
bin=${FUZZ_BIN:-$root/build/fuzz/bin}/fuzz_$t
[ -x "$bin" ] || { echo "fuzz.sh: $bin missing: tests/fuzz/build.sh fuzz $t" >&2; exit 1; }
case $t in
  npy) dict=npy.dict; maxlen=4096 ;;
  npz) dict=npy.dict; maxlen=8192 ;;
  csv) dict=csv.dict; maxlen=4096 ;;
  graph) dict=json.dict; maxlen=8192 ;;
  *) dict=json.dict; maxlen=4096 ;;
esac
work=$root/build/fuzz/work/$t seeds=$root/build/fuzz/seeds corpus=$root/tests/fuzz/corpus/$t
art=$root/build/fuzz/artifacts/$t logs=$root/build/fuzz/logs
mkdir -p "$work" "$art" "$logs" "$corpus"
[ -d "$seeds/$t" ] || NXVK=$root/nxvk /usr/bin/python3 tests/fuzz/make_seeds.py "$seeds"

if [ "$secs" = merge ]; then
  cap=${FUZZ_CORPUS_CAP:-199} # files per target in the committed corpus
  new=$root/build/fuzz/merged/$t
  rm -rf "$new"; mkdir -p "$new"
  # inputs that crash during a merge are left out, their files written
  # under build/fuzz/artifacts (libFuzzer's default is the current folder)
  "$bin" -merge=1 -max_len=$maxlen -rss_limit_mb=2048 -timeout=60 -artifact_prefix="$art/merge-" \
    "$new" "$corpus" "$seeds/$t" "$work" 2>"$logs/$t.merge.log"
  grep -E 'MERGE-OUTER: [0-9]+ new files' "$logs/$t.merge.log" || true
  if [ "$(ls "$new" | wc -l)" -gt "$cap" ]; then
    # over the cap: a greedy cover of the merged inputs' edges, then features
    sel=$root/build/fuzz/merged/$t.sel
    rm -rf "$sel"
    /usr/bin/python3 "$root/tests/fuzz/select_corpus.py" "$bin" "$cap" "$new" "$sel" \
      -max_len=$maxlen -rss_limit_mb=2048 -timeout=60 -artifact_prefix="$art/merge-"
    new=$sel
  fi
  rm -rf "$corpus"; mkdir -p "$corpus"
  cp "$new"/* "$corpus"/
  echo "fuzz.sh: $t corpus: $(ls "$corpus" | wc -l) files, $(du -sk "$corpus" | cut -f1) KiB"
  exit 0
fi

mkdir -p "$logs/$t.d"
cd "$logs/$t.d" # -jobs writes fuzz-N.log into the current folder
rm -f fuzz-0.log
set +e
nice -n 10 "$bin" -jobs=1 -workers=1 -dict="$root/tests/fuzz/$dict" -max_len=$maxlen \
  -max_total_time="$secs" -rss_limit_mb=2048 -timeout=60 -print_final_stats=1 \
  -artifact_prefix="$art/" "$@" "$work" "$corpus" "$seeds/$t" >/dev/null 2>&1
rc=$?
set -e
mv -f fuzz-0.log "$logs/$t.log"
grep -E '^#[0-9]+ +(INITED|DONE)|^stat::|ERROR|SUMMARY|check failed' "$logs/$t.log" | tail -12
echo "fuzz.sh: $t exit $rc, artifacts: $(ls "$art" | wc -l)"
exit $rc
