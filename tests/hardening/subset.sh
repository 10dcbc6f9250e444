# tests/hardening/subset.sh - the representative subset that the sanitizer
# and validation tests run (sourced, not a test itself).
#
# The caller sets BIN (the binary), T (a scratch folder), and defines
#   clean FILE   -> 0 when FILE (a command's standard error) shows nothing
#                   the build under test must not print (sanitizer reports,
#                   validation messages), else prints why and returns 1.
# Every op family runs with --check on small inputs, then a fused graph, bad
# inputs, `nxvk info`, and a scripted `nxvk port` session.

. tests/tap.sh

# run_case DESC WANT_STATUS CMD...: the status, and a clean standard error;
# for WANT_STATUS != 0 also exactly one `nxvk: error:` line.
run_case() {
  local desc=$1 want=$2; shift 2
  timeout 300 "$@" >"$T/out" 2>"$T/err"
  local rc=$? why=""
  [ "$rc" -eq "$want" ] || why="exit $rc, want $want"
  if [ -z "$why" ] && [ "$want" -ne 0 ]; then
    [ "$(grep -c '' "$T/err")" -eq 1 ] && grep -q '^nxvk: error: ' "$T/err" || why="want one 'nxvk: error:' line"
  fi
  if [ -z "$why" ] && ! clean "$T/err" >"$T/why"; then why=$(cat "$T/why"); fi
  if [ -z "$why" ]; then ok "$desc"; else not_ok "$desc" "$why" "$(head -c 1500 "$T/err")"; fi
}

run_subset() {
  local F='{"dtype":"f32","shape":[2,3],"data":[0.5,-1.5,"inf","-0","nan",1e-40]}'
  local G='{"dtype":"f32","shape":[3],"data":[2,-3,0.25]}'
  local D='{"dtype":"f64","shape":[2,2],"data":[1e-310,-2.5,3,"-inf"]}'
  local I='{"dtype":"i32","shape":[4],"data":[-2147483648,-1,0,2147483647]}'
  local P='{"dtype":"u8","shape":[2,1],"data":[1,0]}'

  run_case "info" 0 "$BIN" info
  run_case "info --json" 0 "$BIN" info --json

  # every op family with --check (the CPU reference beside the GPU)
  run_case "unary f32 (exp) --check" 0 "$BIN" run --op exp --check "$F"
  run_case "unary f64 (log1p) --check" 0 "$BIN" run --op log1p --check "$D"
  run_case "unary i32 (abs) --check" 0 "$BIN" run --op abs --check "$I"
  run_case "binary with broadcasting (add) --check" 0 "$BIN" run --op add --check "$F" "$G"
  run_case "binary i32 (divide) --check" 0 "$BIN" run --op divide --check "$I" '{"dtype":"i32","data":[0]}'
  run_case "compare (less) --check" 0 "$BIN" run --op less --check "$F" "$G"
  run_case "select --check" 0 "$BIN" run --op select --check "$P" "$F" "$G"
  run_case "reduce (sum, axes, keep_axes) --check" 0 "$BIN" run --op sum --attrs '{"axes":[1],"keep_axes":true}' --check "$F"
  run_case "reduce (argmax) --check" 0 "$BIN" run --op argmax --attrs '{"axes":[0]}' --check "$D"
  run_case "reduce (mean, all axes) --check" 0 "$BIN" run --op mean --check "$D"
  run_case "dot --check" 0 "$BIN" run --op dot --check "$F" '{"dtype":"f32","shape":[3,2],"data":[1,2,3,4,5,6]}'
  run_case "batched dot f64 --check" 0 "$BIN" run --op dot --check \
    '{"dtype":"f64","shape":[2,1,2],"data":[1,2,3,4]}' '{"dtype":"f64","shape":[2,2,1],"data":[5,6,7,8]}'
  run_case "movement (transpose) --check" 0 "$BIN" run --op transpose --attrs '{"perm":[1,0]}' --check "$F"
  run_case "movement (slice) --check" 0 "$BIN" run --op slice --attrs '{"start":[0,1],"length":[2,2],"stride":[1,1]}' --check "$F"
  run_case "movement (concatenate) --check" 0 "$BIN" run --op concatenate --check "$G" "$G" "$G"
  run_case "movement (reshape) --check" 0 "$BIN" run --op reshape --attrs '{"shape":[3,-1]}' --check "$F"
  run_case "movement (as_type f32 -> i32) --check" 0 "$BIN" run --op as_type --attrs '{"dtype":"i32"}' --check "$F"
  run_case "source (iota) --check" 0 "$BIN" run --op iota --attrs '{"shape":[2,3],"axis":1}' --check
  run_case "source (random_uniform) --check" 0 "$BIN" run --op random_uniform --attrs '{"shape":[8],"seed":7}' --check

  # files in and out: .npy (written, then read back) and .csv
  run_case "write a .npy" 0 "$BIN" run --op negate -o "$T/neg.npy" "$F"
  run_case "read a .npy, --check" 0 "$BIN" run --op sqrt --check "$T/neg.npy"
  printf '1,2,3\n4,5,6\n' >"$T/t.csv"
  run_case "read a .csv (f64), --check" 0 "$BIN" run --op tanh --dtype f64 --check "$T/t.csv"

  # a graph: fused elementwise chain (run-time compile, then the disk cache),
  # a reduction and a dot outside it
  cat >"$T/g.json" <<EOF
{"inputs": {"x": $F, "y": $G, "w": {"dtype": "f32", "shape": [3, 2], "data": [1, 0, 0, 1, 1, 1]}},
 "ops": [{"op": "multiply", "in": ["x", "y"], "out": "m"},
         {"op": "sigmoid", "in": ["m"], "out": "s"},
         {"op": "add", "in": ["s", "y"], "out": "a"},
         {"op": "greater", "in": ["a", "y"], "out": "c"},
         {"op": "select", "in": ["c", "a", "m"], "out": "z"},
         {"op": "sum", "in": ["z"], "attrs": {"axes": [0]}, "out": "r"},
         {"op": "dot", "in": ["z", "w"], "out": "d"}],
 "outputs": {"z": "z.npy", "r": "r.npy", "d": true}}
EOF
  run_case "graph with fusion, --check --explain (compiles)" 0 "$BIN" run "$T/g.json" --check --explain
  run_case "graph again (kernel from the disk cache)" 0 "$BIN" run "$T/g.json" --check
  run_case "graph --no-fusion --check" 0 "$BIN" run "$T/g.json" --check --no-fusion

  # bad inputs: one line, the documented status, nothing else
  printf 'not a npy file' >"$T/bad.npy"
  printf '\x93NUMPY\x01\x00\x40\x00{"descr": "<f4", "fortran_order": False, "shape": (9,)}' >"$T/trunc.npy"
  printf '1,2\n3\n' >"$T/ragged.csv"
  run_case "bad .npy magic" 2 "$BIN" run --op abs "$T/bad.npy"
  run_case "truncated .npy" 2 "$BIN" run --op abs "$T/trunc.npy"
  run_case "ragged .csv" 2 "$BIN" run --op abs "$T/ragged.csv"
  run_case "missing file" 1 "$BIN" run --op abs "$T/none.npy"
  mkdir -p "$T/folder.npy"
  run_case "a folder named .npy" 1 "$BIN" run --op abs "$T/folder.npy"
  run_case "invalid inline JSON" 2 "$BIN" run --op abs '{"dtype":"f32","data":[1,}'
  run_case "unknown op" 2 "$BIN" run --op frobnicate "$G"
  run_case "bad attributes" 2 "$BIN" run --op sum --attrs '{"perm":[0]}' "$G"
  run_case "shapes that do not fit" 2 "$BIN" run --op add "$F" '{"dtype":"f32","data":[1,2]}'
  run_case "mixed dtypes" 2 "$BIN" run --op add "$F" "$D"
  run_case "rank 9" 2 "$BIN" run --op abs '{"dtype":"f32","shape":[1,1,1,1,1,1,1,1,1],"data":[1]}'
  printf '{"inputs":{"x":%s},"ops":[{"op":"exp","in":["y"],"out":"z"}],"outputs":{"z":true}}' "$G" >"$T/bad_graph.json"
  run_case "graph naming an unknown value" 2 "$BIN" run "$T/bad_graph.json"
  [ ! -e "$T/z.npy.tmp" ] && ok "no temp file left by a failed graph" || not_ok "no temp file left by a failed graph"

  # a scripted port session (python client): every command, errors, a lost device
  /usr/bin/python3 tests/hardening/port_session.py "$BIN" >"$T/port.txt" 2>&1
  sed -n '/^stderr:$/,$p' "$T/port.txt" | sed 1d >"$T/port.err"
  while IFS=$'\t' read -r res desc detail; do
    if [ "$res" = ok ]; then ok "$desc"; else not_ok "$desc" "$detail"; fi
  done < <(sed '/^stderr:$/,$d' "$T/port.txt")
  if clean "$T/port.err" >"$T/why"; then ok "port session: clean standard error"; else
    not_ok "port session: clean standard error" "$(cat "$T/why")" "$(head -c 1500 "$T/port.err")"; fi
}
