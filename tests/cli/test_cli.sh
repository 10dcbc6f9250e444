#!/usr/bin/env bash
# test_cli.sh - the command line as a user meets it: help and version on
# stdout with status 0, usage errors as one stderr line with status 2
# ("did you mean" the nearest command or option), -oFILE and --output=FILE,
# no Vulkan driver (status 3, which variable points where, which package),
# `nxvk info --json` with every field on every device, device choice
# (--device N|NAME, NXVK_DEVICE; status 3 when there is no such device),
# the binary without a Vulkan loader (status 3, "no Vulkan loader found",
# help still works), and validation layers on through NXVK_VALIDATE=1 or
# --validate with a clean run.
set -u
cd "$(dirname "$0")/../.." || exit 1
T=$(mktemp -d /tmp/nxvk_cli.XXXXXX)
trap 'rm -rf "$T"' EXIT
cp "${NXVK:-./nxvk}" "$T/nxvk" 2>/dev/null && [ -s "$T/nxvk" ] ||
  { echo "not ok 1 - no nxvk binary at ${NXVK:-./nxvk}"; echo "1..1"; exit 1; }
NXVK="$T/nxvk"
PY=/usr/bin/python3
n=0
fail=0

ok() { # status desc [diag]
  n=$((n + 1))
  if [ "$1" -eq 0 ]; then
    echo "ok $n - $2"
  else
    echo "not ok $n - $2"
    [ -n "${3:-}" ] && printf '%s\n' "$3" | head -40 | sed 's/^/#   /'
    fail=1
  fi
}

# run ARGS...: sets rc, out (stdout file), err (stderr file)
out="$T/stdout" err="$T/stderr"
run() { "$NXVK" "$@" >"$out" 2>"$err"; rc=$?; }
env_run() { env "$@" >"$out" 2>"$err"; rc=$?; }
diag() { echo "exit $rc"; echo "stdout: $(head -c 600 "$out")"; echo "stderr: $(head -c 600 "$err")"; }

# ---- help and version: exit 0, usage on stdout, nothing on stderr
help_ok() { # desc args...
  local desc=$1
  shift
  run "$@"
  ok "$([ "$rc" -eq 0 ] && grep -q '^usage: nxvk' "$out" && [ ! -s "$err" ]; echo $?)" "$desc: exit 0, usage on stdout, stderr empty" "$(diag)"
}
help_ok "nxvk --help" --help
help_ok "nxvk -h" -h
help_ok "nxvk help" help
help_ok "nxvk help run" help run
help_ok "nxvk help info" help info
help_ok "nxvk run --help" run --help
help_ok "nxvk info --help" info --help
run help run
cp "$out" "$T/help_run"
run run --help
ok "$(cmp -s "$out" "$T/help_run"; echo $?)" "'nxvk help run' prints what 'nxvk run --help' prints"
ok "$(grep -q 'usage: nxvk run --op NAME' "$out" && grep -q -- '--attrs' "$out" && grep -q -- '--list-ops' "$out"; echo $?)" \
  "'nxvk run --help' shows the --op form and its options" "$(cat "$out")"
run --help
ok "$(grep -q '^  info ' "$out" && grep -q '^  run ' "$out" && grep -qi 'exit status' "$out"; echo $?)" \
  "'nxvk --help' lists the commands and the exit statuses" "$(cat "$out")"
run --version
ok "$([ "$rc" -eq 0 ] && grep -qE '^nxvk [0-9]+\.[0-9]+\.[0-9]+$' "$out" && [ ! -s "$err" ]; echo $?)" "nxvk --version: exit 0, 'nxvk X.Y.Z' on stdout" "$(diag)"
want_version=$(sed -n 's/^#define NXVK_VERSION "\(.*\)"/\1/p' src/nxvk.h)
ok "$([ "$(cat "$out")" = "nxvk $want_version" ]; echo $?)" "--version says the version of src/nxvk.h ($want_version)" "$(cat "$out")"

# ---- usage errors: exit 2, one line on stderr, nothing on stdout
usage_err() { # desc mention args...
  local desc=$1 mention=$2
  shift 2
  run "$@"
  ok "$([ "$rc" -eq 2 ] && [ ! -s "$out" ] && [ "$(wc -l <"$err")" -eq 1 ] && grep -q '^nxvk: error: ' "$err" && grep -qF -- "$mention" "$err"; echo $?)" \
    "$desc: exit 2, one stderr line naming '$mention', stdout empty" "$(diag)"
}
usage_err "unknown subcommand" "frobnicate" frobnicate
usage_err "nxvk help of an unknown command" "frobnicate" help frobnicate
usage_err "unknown option to info" "--frob" info --frob
usage_err "unknown option to run" "--frob" run --frob
usage_err "unknown short option to run" "-z" run -z
usage_err "info with a stray argument" "stray" info stray
usage_err "run with nothing to run" "run" run
usage_err "--device without its value" "--device" info --device
run
ok "$([ "$rc" -eq 2 ] && [ ! -s "$out" ] && grep -q '^usage: nxvk' "$err"; echo $?)" "nxvk with no arguments: exit 2, usage on stderr" "$(diag)"

# ---- "did you mean": the nearest command or option for a typo, none for a stranger
usage_err "a swapped command" "did you mean 'info'?" ifno
usage_err "a cut-short command" "did you mean 'conformance'?" conf
usage_err "nxvk help of a misspelt command" "did you mean 'run'?" help rnu
usage_err "a misspelt long option" "did you mean '--json'?" info --jsn
usage_err "a long option with one dash" "did you mean '--json'?" info -json
usage_err "a misspelt option of run" "did you mean '--output'?" run --ouptut x.npy
usage_err "a misspelt bench mode" "did you mean 'matmul'?" bench matmull
usage_err "a misspelt stress mode" "did you mean 'race'?" stress rcae
for args in "frobnicate" "info --frob"; do
  run $args
  ok "$([ "$rc" -eq 2 ] && ! grep -q 'did you mean' "$err"; echo $?)" "nxvk $args: nothing near enough, no suggestion" "$(diag)"
done

# ---- short option values attached (-oFILE) or apart (-o FILE), and --output=FILE
for form in "-o$T/att.npy" "-o $T/sep.npy" "--output=$T/eq.npy"; do
  f=$(printf '%s' "$form" | sed 's/^-o *//; s/^--output=//')
  rm -f "$f"
  run run --op negate $form '{"dtype":"f32","shape":[2],"data":[1,2]}'
  ok "$([ "$rc" -eq 0 ] && [ -s "$f" ] && [ ! -e "$T/-o" ] && $PY -c 'import numpy,sys; a=numpy.load(sys.argv[1]); sys.exit(0 if list(a)==[-1,-2] else 1)' "$f"; echo $?)" \
    "run --op negate $form writes [-1,-2] there" "$(diag)"
done
usage_err "an unknown short option with a value attached" "'-z'" run -zfoo

# ---- no Vulkan driver: which variable points where, which package gives one; exit 3
nodrv() { # desc var=value args...: one stderr line that helps, exit 3, stdout empty
  local desc=$1 setting=$2
  shift 2
  env_run -u VK_DRIVER_FILES -u VK_ICD_FILENAMES "$setting" "$NXVK" "$@"
  # conformance's TAP stream opens before the device: its plan says 1..0 then
  ok "$([ "$rc" -eq 3 ] && { [ ! -s "$out" ] || ! grep -q '^ok' "$out"; } && [ "$(wc -l <"$err")" -eq 1 ] && grep -q '^nxvk: error: no Vulkan driver found' "$err" &&
        grep -qF "$setting" "$err" && grep -q 'mesa-vulkan-drivers' "$err" && ! grep -q 'VK_ERROR' "$err"; echo $?)" \
    "$desc: 'no Vulkan driver found', names $setting and mesa-vulkan-drivers, exit 3" "$(diag)"
}
nodrv "info with VK_DRIVER_FILES at a missing file" VK_DRIVER_FILES=/nonexistent.json info
nodrv "info --json with VK_DRIVER_FILES at a missing file" VK_DRIVER_FILES=/nonexistent.json info --json
nodrv "info with VK_ICD_FILENAMES at a missing file" VK_ICD_FILENAMES=/nonexistent.json info
nodrv "run with no driver" VK_DRIVER_FILES=/nonexistent.json run --op negate '{"dtype":"f32","shape":[1],"data":[1]}'
nodrv "bench with no driver" VK_DRIVER_FILES=/nonexistent.json bench peak --min-time 0
nodrv "stress with no driver" VK_DRIVER_FILES=/nonexistent.json stress oom --quick
nodrv "conformance with no driver" VK_DRIVER_FILES=/nonexistent.json conformance --quick --op add
env_run VK_DRIVER_FILES=/nonexistent.json "$NXVK" port </dev/null
ok "$([ "$rc" -eq 3 ] && grep -q 'no Vulkan driver found' "$err"; echo $?)" "port with no driver: exit 3, 'no Vulkan driver found'" "$(diag)"
# a file that is there but no driver manifest
env_run VK_DRIVER_FILES="$T/nxvk" "$NXVK" info
ok "$([ "$rc" -eq 3 ] && grep -qF "VK_DRIVER_FILES=$T/nxvk names a driver that did not load" "$err"; echo $?)" \
  "VK_DRIVER_FILES at a file that is no driver: says it did not load" "$(diag)"
# no variable set and the manifest folders empty (a private mount namespace)
if unshare -r -m true 2>/dev/null; then
  mkdir -p "$T/empty"
  cat >"$T/nodrv.sh" <<EOF
for d in /usr/share/vulkan/icd.d /etc/vulkan/icd.d /usr/local/share/vulkan/icd.d; do [ -d "\$d" ] && mount --bind "$T/empty" "\$d"; done
unset VK_DRIVER_FILES VK_ICD_FILENAMES VK_ADD_DRIVER_FILES
"$NXVK" info
EOF
  unshare -r -m bash "$T/nodrv.sh" >"$out" 2>"$err"
  rc=$?
  ok "$([ "$rc" -eq 3 ] && [ "$(wc -l <"$err")" -eq 1 ] && grep -q 'no Vulkan driver found (VK_DRIVER_FILES and VK_ICD_FILENAMES are not set' "$err" &&
        grep -q 'mesa-vulkan-drivers' "$err"; echo $?)" "no manifest anywhere and no variable: says neither is set, where it looked, exit 3" "$(diag)"
else
  echo "# cannot empty the driver manifest folders here (unshare -r -m refused): that no-driver check needs another machine"
fi

# ---- info --json: every device, every field
run info --json
cp "$out" "$T/info.json"
ok "$([ "$rc" -eq 0 ] && [ ! -s "$err" ]; echo $?)" "nxvk info --json: exit 0, stderr empty" "$(diag)"
$PY - "$T/info.json" >"$T/fields" 2>&1 <<'EOF'
import json, re, sys
try:
    doc = json.load(open(sys.argv[1]))
except Exception as e:
    print("not parsable: %r" % e)
    sys.exit(1)
problems = []
def need(obj, key, types, where):
    if not isinstance(obj, dict) or key not in obj:
        problems.append("%s: missing %s" % (where, key))
        return None
    v = obj[key]
    if types is not None and not isinstance(v, types):
        problems.append("%s.%s: %r is not %s" % (where, key, v, types))
    if isinstance(v, bool) and types in (int, (int, float)):
        problems.append("%s.%s: bool where a number belongs" % (where, key))
    return v
num = (int, float)
devs = doc.get("devices") if isinstance(doc, dict) else None
if not isinstance(devs, list) or not devs:
    problems.append("no \"devices\" list")
    devs = []
for i, d in enumerate(devs):
    w = "devices[%d]" % i
    for k in ("name", "vendor", "type", "driver_name", "driver_info", "driver_version", "api_version",
              "pipeline_cache_uuid"):
        need(d, k, str, w)
    for k in ("vendor_id", "device_id"):
        need(d, k, int, w)
    if d.get("type") not in ("discrete", "integrated", "virtual", "cpu", "other"):
        problems.append("%s.type: %r" % (w, d.get("type")))
    if not re.fullmatch(r"[0-9a-f]{32}", str(d.get("pipeline_cache_uuid"))):
        problems.append("%s.pipeline_cache_uuid: %r is not 32 hex digits" % (w, d.get("pipeline_cache_uuid")))
    if not re.fullmatch(r"\d+\.\d+\.\d+", str(d.get("api_version"))):
        problems.append("%s.api_version: %r" % (w, d.get("api_version")))
    if not str(d.get("name", "")).strip():
        problems.append("%s.name is empty" % w)
    mem = need(d, "memory", dict, w) or {}
    avail = mem.get("budget_available")
    heaps = need(mem, "heaps", list, w + ".memory") or []
    if not heaps:
        problems.append("%s.memory.heaps is empty" % w)
    for j, h in enumerate(heaps):
        hw = "%s.memory.heaps[%d]" % (w, j)
        size = need(h, "size", num, hw)
        need(h, "device_local", bool, hw)
        for k in ("budget", "usage"):
            if k not in h:
                problems.append("%s: missing %s" % (hw, k))
            elif h[k] is None:
                if avail is not False:
                    problems.append("%s.%s is null but budget_available is %r" % (hw, k, avail))
            elif not isinstance(h[k], num) or isinstance(h[k], bool):
                problems.append("%s.%s: %r" % (hw, k, h[k]))
            elif avail is False:
                problems.append("%s.%s is a number without VK_EXT_memory_budget" % (hw, k))
        if isinstance(size, num) and size <= 0:
            problems.append("%s.size is %r" % (hw, size))
    lim = need(d, "limits", dict, w) or {}
    for k in ("max_workgroup_size", "max_workgroup_count"):
        v = need(lim, k, list, w + ".limits")
        if isinstance(v, list) and (len(v) != 3 or not all(isinstance(x, num) and x > 0 for x in v)):
            problems.append("%s.limits.%s: %r" % (w, k, v))
    for k in ("max_workgroup_invocations", "max_shared_memory", "max_push_constants",
              "max_storage_buffer_range", "subgroup_size", "timestamp_period_ns"):
        v = need(lim, k, num, w + ".limits")
        if isinstance(v, num) and not isinstance(v, bool) and v < 0:
            problems.append("%s.limits.%s is negative" % (w, k))
    feat = need(d, "features", dict, w) or {}
    for k in ("f64", "f16", "int64", "storage_8bit", "timestamps", "cooperative_matrix_nv",
              "cooperative_matrix_khr", "coopmat_f16_f32", "coopmat_bf16_f32"):
        need(feat, k, bool, w + ".features")
    # the cooperative matrix configurations: a list of strings, empty without
    # the NV extension, and listing the one coopmat needs where it is usable
    shapes = need(feat, "cooperative_matrix_shapes", list, w + ".features")
    if isinstance(shapes, list):
        if not all(isinstance(x, str) and x for x in shapes):
            problems.append("%s: cooperative_matrix_shapes holds a non-string: %r" % (w, shapes))
        nv = [s for s in shapes if not s.endswith("(KHR)")]
        if nv and not feat.get("cooperative_matrix_nv"):
            problems.append("%s: configurations %r without VK_NV_cooperative_matrix" % (w, nv))
        if len(nv) < len(shapes) and not feat.get("cooperative_matrix_khr"):
            problems.append("%s: KHR configurations %r without VK_KHR_cooperative_matrix" % (w, shapes))
        if feat.get("coopmat_bf16_f32") and not any(s.startswith("bf16 x bf16 + f32 -> f32 ") and
                                                     s.endswith("(KHR)") for s in shapes):
            problems.append("%s: coopmat_bf16_f32 but no bf16 configuration is listed: %r" % (w, shapes))
        if feat.get("coopmat_f16_f32") and "f16 x f16 + f32 -> f32 16x16x16" not in shapes:
            problems.append("%s: coopmat_f16_f32 but its configuration is not listed: %r" % (w, shapes))
    # compute units: a positive count, or null where no vendor extension says
    if "compute_units" not in lim:
        problems.append("%s.limits: missing compute_units" % w)
    elif lim["compute_units"] is not None and not (isinstance(lim["compute_units"], int)
                                                   and not isinstance(lim["compute_units"], bool)
                                                   and lim["compute_units"] > 0):
        problems.append("%s.limits.compute_units: %r is neither null nor a positive count" % (w, lim["compute_units"]))
    # identity: UUIDs (32 hex digits, or null before Vulkan 1.1), driver ID and
    # the conformance version (null where the driver does not report them)
    for k in ("device_uuid", "driver_uuid"):
        if k not in d:
            problems.append("%s: missing %s" % (w, k))
        elif d[k] is not None and not re.fullmatch(r"[0-9a-f]{32}", str(d[k])):
            problems.append("%s.%s: %r" % (w, k, d[k]))
    if "driver_id" not in d or not (d["driver_id"] is None or (isinstance(d["driver_id"], int) and d["driver_id"] > 0)):
        problems.append("%s.driver_id: %r" % (w, d.get("driver_id", "missing")))
    if d.get("driver_id") is not None and not (isinstance(d.get("driver_id_name"), str) and d["driver_id_name"]):
        problems.append("%s.driver_id_name: %r" % (w, d.get("driver_id_name")))
    cv = d.get("conformance_version", "missing")
    if cv is not None and not re.fullmatch(r"\d+\.\d+\.\d+\.\d+", str(cv)):
        problems.append("%s.conformance_version: %r" % (w, cv))
    qfs = need(d, "queue_families", list, w) or []
    if not any("compute" in (q.get("flags") or []) for q in qfs if isinstance(q, dict)):
        problems.append("%s.queue_families: no family with compute: %r" % (w, qfs))
    for j, q in enumerate(qfs):
        qw = "%s.queue_families[%d]" % (w, j)
        need(q, "flags", list, qw)
        if not isinstance(q.get("count"), int) or q.get("count") < 1:
            problems.append("%s.count: %r" % (qw, q.get("count")))
        need(q, "timestamp_valid_bits", int, qw)
    types = need(mem, "types", list, w + ".memory") or []
    if not types:
        problems.append("%s.memory.types is empty" % w)
    for j, t in enumerate(types):
        if not isinstance(t, dict) or not isinstance(t.get("heap"), int) or not 0 <= t["heap"] < len(heaps) \
           or not isinstance(t.get("flags"), list):
            problems.append("%s.memory.types[%d]: %r" % (w, j, t))
    exts = need(d, "extensions", list, w) or []
    if not exts or not all(isinstance(x, str) and x.startswith("VK_") for x in exts):
        problems.append("%s.extensions: %r" % (w, exts[:5]))
    print("NEXT%d=%d" % (i, len(exts)))
    print("NQF%d=%d" % (i, len(qfs)))
    print("NMT%d=%d" % (i, len(types)))
    fc = need(d, "float_controls", dict, w) or {}
    for k in ("denorm_preserve_f32", "denorm_preserve_f64", "denorm_flush_f32", "denorm_flush_f64",
              "signed_zero_inf_nan_preserve_f32", "signed_zero_inf_nan_preserve_f64", "denorm_preserve_f16",
              "denorm_flush_f16", "rounding_mode_rte_f16", "signed_zero_inf_nan_preserve_f16"):
        need(fc, k, bool, w + ".float_controls")
print("\n".join(problems) if problems else "%d device(s), all fields present" % len(devs))
print("NDEV=%d" % len(devs))
print("NAME0=%s" % (devs[0].get("name", "") if devs else ""))
sys.exit(1 if problems else 0)
EOF
fields_rc=$?
ok "$fields_rc" "nxvk info --json parses and every device has every field" "$(grep -v -e '^NDEV=' -e '^NAME0=' -e '^N[EQM][XFT]' "$T/fields")"
ndev=$(sed -n 's/^NDEV=//p' "$T/fields")
name0=$(sed -n 's/^NAME0=//p' "$T/fields")
ndev=${ndev:-0}
run info
ok "$([ "$rc" -eq 0 ] && [ "$(grep -c '^device [0-9]*:' "$out")" -eq "$ndev" ]; echo $?)" "nxvk info (text) shows the $ndev device(s) of --json" "$(diag)"
ok "$(! grep -q '^  queue family\|^  extensions' "$out"; echo $?)" "nxvk info (text) leaves queue families and extensions to --verbose" "$(diag)"
if grep -q '"llvmpipe' "$T/info.json"; then
  ok "$(grep -q '^  driver id       MESA_LLVMPIPE (13), conformance [0-9.]*$' "$out" &&
        grep -qE '^  uuid            device [0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}, driver ' "$out"; echo $?)" \
    "nxvk info on lavapipe shows its driver ID, conformance version and UUIDs" "$(diag)"
fi
run info --verbose
next0=$(sed -n 's/^NEXT0=//p' "$T/fields")
nqf0=$(sed -n 's/^NQF0=//p' "$T/fields")
nmt0=$(sed -n 's/^NMT0=//p' "$T/fields")
got_ext=$(awk '/^device 1:/{exit} /^  extensions /{print $2}' "$out")
got_words=$(awk '/^device 1:/{exit} e&&/^    VK_/{n+=NF} /^  extensions /{e=1} END{print n+0}' "$out")
ok "$([ "$rc" -eq 0 ] && [ "$got_ext" = "$next0" ] && [ "$got_words" = "$next0" ] &&
      [ "$(awk '/^device 1:/{exit} /^  queue family /' "$out" | wc -l)" = "$nqf0" ] &&
      [ "$(awk '/^device 1:/{exit} /^  memory type /' "$out" | wc -l)" = "$nmt0" ] &&
      awk '/^device 1:/{exit} /^  queue family /' "$out" | grep -q 'compute'; echo $?)" \
  "info --verbose: device 0's $nqf0 queue families, $nmt0 memory types and $next0 extensions, as --json has them" "$(diag)"

# ---- device choice
count_json() { $PY -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["devices"]))' "$out" 2>/dev/null; }
name_json() { $PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["devices"][0]["name"])' "$out" 2>/dev/null; }
run info --json --device 0
ok "$([ "$rc" -eq 0 ] && [ "$(count_json)" = 1 ] && [ "$(name_json)" = "$name0" ]; echo $?)" "info --device 0 selects device 0 only ($name0)" "$(diag)"
word=$(printf '%s' "$name0" | awk '{print $1}')
run info --json --device "$word"
ok "$([ "$rc" -eq 0 ] && [ "$(count_json)" = 1 ] && name_json | grep -qF "$word"; echo $?)" "info --device $word (a name substring) selects it" "$(diag)"
if grep -q '"llvmpipe' "$T/info.json"; then
  run info --json --device llvmpipe
  ok "$([ "$rc" -eq 0 ] && [ "$(count_json)" = 1 ] && name_json | grep -q llvmpipe; echo $?)" "info --device llvmpipe selects lavapipe" "$(diag)"
fi
env_run NXVK_DEVICE=0 "$NXVK" info --json
ok "$([ "$rc" -eq 0 ] && [ "$(count_json)" = 1 ]; echo $?)" "NXVK_DEVICE=0 selects one device" "$(diag)"
for bad in "$ndev" 9 zzz_no_such_gpu; do
  [ "$bad" = 9 ] && [ "$ndev" -gt 9 ] && continue
  run info --device "$bad"
  ok "$([ "$rc" -eq 3 ] && [ ! -s "$out" ] && [ "$(wc -l <"$err")" -eq 1 ] && grep -qF -- "$bad" "$err"; echo $?)" \
    "info --device $bad (no such device): exit 3, one line naming it" "$(diag)"
done
env_run NXVK_DEVICE=zzz_no_such_gpu "$NXVK" run --op negate '{"dtype":"f32","shape":[1],"data":[1]}'
ok "$([ "$rc" -eq 3 ] && grep -q zzz_no_such_gpu "$err"; echo $?)" "NXVK_DEVICE naming no device: run exits 3" "$(diag)"
run run --device 0 --op negate '{"dtype":"f32","shape":[2],"data":[1,"-0"]}'
ok "$([ "$rc" -eq 0 ] && grep -qF '[-1,0]' "$out"; echo $?)" "run --device 0 computes on it (negate [1,-0] = [-1,0])" "$(diag)"

# ---- validation layers: on through NXVK_VALIDATE=1 and --validate, and clean
A='{"dtype":"f32","shape":[2,3],"data":[1,2,3,4,5,"nan"]}'
B='{"dtype":"f32","shape":[3],"data":[10,20,"-0"]}'
layer_in() { grep -q 'Insert instance layer "VK_LAYER_KHRONOS_validation"' "$err"; }
env_run VK_LOADER_DEBUG=layer "$NXVK" run --op add "$A" "$B"
layer_in
ok "$([ $? -ne 0 ] && [ "$rc" -eq 0 ]; echo $?)" "without NXVK_VALIDATE the validation layer stays off" "$(diag)"
if [ -f /usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json ]; then
  env_run NXVK_VALIDATE=1 VK_LOADER_DEBUG=layer "$NXVK" run --op add "$A" "$B"
  ok "$(layer_in; echo $?)" "NXVK_VALIDATE=1 loads VK_LAYER_KHRONOS_validation" "$(diag)"
  env_run VK_LOADER_DEBUG=layer "$NXVK" run --validate --op add "$A" "$B"
  ok "$(layer_in; echo $?)" "run --validate loads VK_LAYER_KHRONOS_validation" "$(diag)"
  for form in "NXVK_VALIDATE=1" "--validate"; do
    if [ "$form" = --validate ]; then run run --validate --op add "$A" "$B"; else env_run NXVK_VALIDATE=1 "$NXVK" run --op add "$A" "$B"; fi
    ok "$([ "$rc" -eq 0 ] && [ ! -s "$err" ] && grep -q '"nan"' "$out"; echo $?)" "run --op add with $form: exit 0, no validation message" "$(diag)"
  done
  $PY -c '
import json, sys
g = {"inputs": {"x": {"dtype": "f32", "shape": [4, 70], "data": [i * 0.25 - 30 for i in range(280)]},
                "w": {"dtype": "f32", "shape": [70, 3], "data": [((i * 7) % 11) - 5 for i in range(210)]}},
     "ops": [{"op": "exp", "in": ["x"], "out": "e"}, {"op": "dot", "in": ["e", "w"], "out": "d"},
             {"op": "sum", "in": ["d"], "attrs": {"axes": [1]}, "out": "s"},
             {"op": "transpose", "in": ["x"], "out": "xt"}, {"op": "iota", "attrs": {"shape": [5]}, "out": "i"},
             {"op": "as_type", "in": ["i"], "attrs": {"dtype": "u8"}, "out": "iu"}],
     "outputs": {"s": "s.npy", "xt": "xt.npy", "iu": True}}
json.dump(g, open(sys.argv[1], "w"))' "$T/graph.json"
  env_run NXVK_VALIDATE=1 "$NXVK" run "$T/graph.json" --print
  ok "$([ "$rc" -eq 0 ] && [ ! -s "$err" ] && [ -s "$T/s.npy" ]; echo $?)" "a graph (exp, dot, sum, transpose, iota, as_type) under NXVK_VALIDATE=1: exit 0, no validation message" "$(diag)"
  env_run NXVK_VALIDATE=1 "$NXVK" info --json
  ok "$([ "$rc" -eq 0 ] && [ ! -s "$err" ]; echo $?)" "info --json under NXVK_VALIDATE=1: exit 0, stderr empty" "$(diag)"
else
  echo "# the Khronos validation layer is not installed: validation checks not run (Debian: vulkan-validationlayers)"
fi

# ---- no Vulkan loader: hide libvulkan in a private mount namespace
# volk dlopens libvulkan.so.1 (then libvulkan.so) through the ld.so cache;
# an empty file at LD_LIBRARY_PATH does not stop that, so /dev/null is bound
# over the real library where only this process tree sees it.
libs=$( (ldconfig -p 2>/dev/null || /sbin/ldconfig -p) | awk '/libvulkan\.so(\.1)? /{print $NF}' | while read -r f; do readlink -f "$f"; done | sort -u)
cat >"$T/noloader.sh" <<EOF
set -e
for f in $libs; do mount --bind /dev/null "\$f"; done
set +e
for args in "--help" "--version" "help run" "run --help" "info --help" "info" "info --json" \
            "run --op negate {\"dtype\":\"f32\",\"shape\":[1],\"data\":[1]}"; do
  "$NXVK" \$args >"$T/nl_out" 2>"$T/nl_err"
  echo "RESULT \$? \$(wc -l <"$T/nl_err") \$(grep -c '^usage: nxvk' "$T/nl_out") \$(grep -c 'no Vulkan loader found' "$T/nl_err") \$(wc -c <"$T/nl_out") \$args"
done
EOF
if [ -z "$libs" ]; then
  # no loader installed at all: the plain binary is the test
  printf 'set +e\n' >"$T/noloader.sh.head"
  sed '1,3d' "$T/noloader.sh" | cat "$T/noloader.sh.head" - >"$T/noloader2.sh"
  bash "$T/noloader2.sh" >"$T/nl_results" 2>&1
  nl_rc=0
elif unshare -r -m true 2>/dev/null; then
  unshare -r -m bash "$T/noloader.sh" >"$T/nl_results" 2>&1
  nl_rc=$?
else
  nl_rc=255
  echo "# cannot hide libvulkan here (unshare -r -m refused): the no-loader checks need a machine without the loader"
fi
if [ "$nl_rc" -ne 255 ]; then
  ok "$nl_rc" "a private mount namespace hides libvulkan ($libs)" "$(cat "$T/nl_results")"
  while read -r tag status errlines usage msg outbytes args; do
    [ "$tag" = RESULT ] || continue
    case "$args" in
      --help|--version|"help run"|"run --help"|"info --help")
        want_usage=1
        [ "$args" = --version ] && want_usage=0
        ok "$([ "$status" -eq 0 ] && [ "$errlines" -eq 0 ] && [ "$outbytes" -gt 0 ] && [ "$usage" -eq "$want_usage" ]; echo $?)" "no loader: nxvk $args still works (exit 0, output on stdout)" "exit $status, $errlines stderr lines, usage lines $usage" ;;
      *)
        ok "$([ "$status" -eq 3 ] && [ "$errlines" -eq 1 ] && [ "$msg" -eq 1 ] && [ "$outbytes" -eq 0 ]; echo $?)" "no loader: nxvk ${args%% \{*} says \"no Vulkan loader found\" and exits 3" "exit $status, $errlines stderr lines, message found $msg, $outbytes stdout bytes" ;;
    esac
  done <"$T/nl_results"
  ok "$([ "$(grep -c '^RESULT' "$T/nl_results")" -eq 8 ]; echo $?)" "no loader: all 8 commands ran" "$(cat "$T/nl_results")"
fi

echo "1..$n"
exit $fail
