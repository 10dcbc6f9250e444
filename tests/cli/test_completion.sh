#!/usr/bin/env bash
# test_completion.sh - shell completion generated from the option tables
# (nxvk completion bash|zsh): the bash script completes commands, every
# option each command's --help lists, its modes, op names, dtypes and files
# where they belong (driven the way bash drives it: COMP_WORDS, COMP_CWORD,
# then COMPREPLY); the zsh script parses, registers itself with compinit, has
# a spec for every option and offers the same words in an interactive zsh; `make install DESTDIR=...` puts both in place
# with the binary and the man pages, and `make uninstall` removes them all.
set -u
cd "$(dirname "$0")/../.." || exit 1
NXVK=${NXVK:-./nxvk}
T=$(mktemp -d /tmp/nxvk_compl.XXXXXX)
trap 'rm -rf "$T"' EXIT
. tests/tap.sh

"$NXVK" completion bash >"$T/nxvk.bash" 2>"$T/err"
rc=$?
if [ "$rc" -eq 0 ] && [ ! -s "$T/err" ] && bash -n "$T/nxvk.bash"; then ok "nxvk completion bash: exit 0, a script bash parses"
else not_ok "nxvk completion bash" "exit $rc" "$(cat "$T/err")"; fi

# complete WORD... : what bash offers for the last word (one per line, sorted)
complete_words() {
  bash -c '
    source "$1"; shift
    COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 ))
    COMPREPLY=(); _nxvk
    printf "%s\n" "${COMPREPLY[@]}" | sort' _ "$T/nxvk.bash" "$@"
}
commands=$("$NXVK" --help | awk '/^commands:/{c=1;next} c&&NF{print $1} c&&!NF{exit}')
got=$(complete_words nxvk "")
missing=$(for c in $commands help; do grep -qx "$c" <<<"$got" || echo "$c"; done)
if [ -z "$missing" ] && ! grep -qx completion <<<"$got"; then ok "nxvk <TAB>: every command of --help (and no hidden one)"
else not_ok "nxvk <TAB>" "missing: $missing" "got: $got"; fi
got=$(complete_words nxvk help r)
if [ "$got" = run ]; then ok "nxvk help r<TAB>: run"; else not_ok "nxvk help r<TAB>" "$got"; fi

# every option each command's --help lists, nothing else
for c in $commands; do
  want=$("$NXVK" "$c" --help | sed -n '/^options:/,$p' | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u)
  got=$(complete_words nxvk "$c" --)
  if [ -n "$want" ] && [ "$want" = "$got" ]; then ok "nxvk $c --<TAB>: the $(wc -l <<<"$want") options of its --help"
  else not_ok "nxvk $c --<TAB>" "$(diff <(echo "$want") <(echo "$got"))"; fi
done

# modes, values from the op table and the dtypes, files
got=$(complete_words nxvk bench "")
if [ "$(echo $got)" = "all compare concurrency fusion matmul ops peak transfers" ]; then ok "nxvk bench <TAB>: its modes"
else not_ok "nxvk bench <TAB>" "$got"; fi
got=$(complete_words nxvk stress "")
if [ "$(echo $got)" = "bounds kill leak oom race" ]; then ok "nxvk stress <TAB>: its modes"
else not_ok "nxvk stress <TAB>" "$got"; fi
ops=$("$NXVK" run --list-ops | awk '{print $1}' | grep '^ex' | sort)
got=$(complete_words nxvk run --op ex)
if [ -n "$ops" ] && [ "$got" = "$ops" ]; then ok "nxvk run --op ex<TAB>: the ops of --list-ops ($(echo $ops))"
else not_ok "nxvk run --op ex<TAB>" "want $ops" "got $got"; fi
got=$(complete_words nxvk bench --ops add,su)
if grep -qx 'add,sum' <<<"$got" && grep -qx 'add,subtract' <<<"$got" && ! grep -qv '^add,su' <<<"$got"; then
  ok "nxvk bench --ops add,su<TAB>: the part after the comma"
else not_ok "nxvk bench --ops add,su<TAB>" "$got"; fi
got=$(complete_words nxvk conformance --dtype f)
if grep -qx f32 <<<"$got" && grep -qx f64 <<<"$got" && ! grep -qv '^f' <<<"$got"; then ok "nxvk conformance --dtype f<TAB>: float dtypes"
else not_ok "nxvk conformance --dtype f<TAB>" "$got"; fi
mkdir -p "$T/dir" && touch "$T/dir/a.npy" "$T/dir/b.json"
got=$(complete_words nxvk run -o "$T/dir/")
if [ "$(echo $got)" = "$T/dir/a.npy $T/dir/b.json" ]; then ok "nxvk run -o DIR/<TAB>: files"
else not_ok "nxvk run -o DIR/<TAB>" "$got"; fi
got=$(complete_words nxvk bench --sizes "")
if [ -z "$got" ]; then ok "nxvk bench --sizes <TAB>: a number, nothing offered"
else not_ok "nxvk bench --sizes <TAB>" "$got"; fi

# ---- zsh
"$NXVK" completion zsh >"$T/_nxvk"
rc=$?
if [ "$rc" -eq 0 ] && head -1 "$T/_nxvk" | grep -qx '#compdef nxvk'; then ok "nxvk completion zsh: exit 0, a #compdef nxvk function file"
else not_ok "nxvk completion zsh" "exit $rc"; fi
missing=""
for c in $commands; do
  for o in $("$NXVK" "$c" --help | sed -n '/^options:/,$p' | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u); do
    awk -v c="  $c)" '$0 == c {s=1; next} s && /;;$/ {print; exit} s' "$T/_nxvk" | grep -qF -- "$o" || missing="$missing $c$o"
  done
done
if [ -z "$missing" ]; then ok "the zsh script has a spec for every option of every command"
else not_ok "the zsh script lacks options" "$missing"; fi
if command -v zsh >/dev/null 2>&1; then
  if zsh -n "$T/_nxvk" 2>"$T/err"; then ok "zsh parses it"; else not_ok "zsh parses it" "$(cat "$T/err")"; fi
  mkdir -p "$T/fpath"
  cp "$T/_nxvk" "$T/fpath/_nxvk"
  got=$(HOME="$T" zsh -f -c "fpath=('$T/fpath' \$fpath); autoload -Uz compinit; compinit -u -D; print -r -- \${_comps[nxvk]}" 2>&1)
  if [ "$got" = _nxvk ]; then ok "compinit registers _nxvk for nxvk"; else not_ok "compinit registers _nxvk for nxvk" "$got"; fi
  # what zsh offers for a typed line, in an interactive zsh on a pty (zsh/zpty),
  # compadd wrapped to record every candidate it is given
  cat >"$T/zcomp.zsh" <<'EOF'
zmodload zsh/zpty || exit 1
zpty z zsh -f -i
zpty -w z "PS1='> '; fpath=($1 \$fpath); autoload -Uz compinit; compinit -u -D -d $3.zcd; path=($2 \$path)"
zpty -w z "compadd() { builtin compadd \"\$@\"; local -a a; builtin compadd -O a \"\$@\"; print -l -- \"\${^a[@]}\" >> $3 }"
: > $3
zpty -w -n z "$4"$'\t'
for i in {1..100}; do [[ -s $3 ]] && break; sleep 0.1; done
sleep 0.5
zpty -d z
EOF
  bindir=$(cd "$(dirname "$NXVK")" && pwd)
  [ "$(basename "$NXVK")" = nxvk ] || { mkdir -p "$T/bin"; cp "$NXVK" "$T/bin/nxvk"; bindir="$T/bin"; }
  zoffers() { timeout 30 zsh -f "$T/zcomp.zsh" "$T/fpath" "$bindir" "$T/zout" "$1" >/dev/null 2>&1; sort -u "$T/zout" | grep -v '^$' | tr '\n' ' '; }
  for case in "nxvk run --op ex|exp expm1 " "nxvk bench --ops add,su|subtract sum " \
              "nxvk bench |all compare concurrency fusion matmul ops peak transfers " "nxvk info --|--device --help --json --validate --verbose " \
              "nxvk conformance --dtype f|f16 f32 f64 "; do
    line=${case%%|*} want=${case#*|}
    got=$(zoffers "$line")
    if [ "$got" = "$want" ]; then ok "zsh: '$line<TAB>' offers $want"; else not_ok "zsh: '$line<TAB>'" "want: $want" "got:  $got"; fi
  done
else
  echo "# zsh is not installed (scripts/setup.sh installs it): the zsh checks need it"
fi

# ---- make install / uninstall into a DESTDIR
D="$T/dest"
if make -s install DESTDIR="$D" PREFIX=/usr >"$T/install.log" 2>&1; then
  ok "make install DESTDIR=... PREFIX=/usr"
  missing=""
  for f in usr/bin/nxvk usr/share/bash-completion/completions/nxvk usr/share/zsh/site-functions/_nxvk \
           $(cd man && ls *.1 | sed 's|^|usr/share/man/man1/|') $(cd man && ls *.7 | sed 's|^|usr/share/man/man7/|'); do
    [ -s "$D/$f" ] || missing="$missing $f"
  done
  if [ -z "$missing" ]; then ok "it installs the binary, every man page and both completion scripts"
  else not_ok "installed files" "missing:$missing" "$(find "$D" -type f)"; fi
  if cmp -s "$D/usr/share/bash-completion/completions/nxvk" "$T/nxvk.bash" && cmp -s "$D/usr/share/zsh/site-functions/_nxvk" "$T/_nxvk"; then
    ok "the installed scripts are what nxvk completion prints"
  else not_ok "the installed scripts are what nxvk completion prints"; fi
  if make -s uninstall DESTDIR="$D" PREFIX=/usr >>"$T/install.log" 2>&1 && [ -z "$(find "$D" -type f)" ]; then
    ok "make uninstall removes every file it installed"
  else not_ok "make uninstall" "$(find "$D" -type f)" "$(cat "$T/install.log")"; fi
else
  not_ok "make install DESTDIR=... PREFIX=/usr" "$(tail -20 "$T/install.log")"
fi

echo "1..$n"
exit $fail
