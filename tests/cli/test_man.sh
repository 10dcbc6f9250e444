#!/usr/bin/env bash
# Each man page's SYNOPSIS says what the command's --help says (git t0450).
# The SYNOPSIS block is `.nf` ... `.fi` with one usage line per line.
set -u
cd "$(dirname "$0")/../.."
NXVK=${NXVK:-./nxvk}
n=0
fail=0
synopsis_of() { # man page -> usage lines, roff escapes undone
  awk '/^\.SH SYNOPSIS/{s=1;next} s&&/^\.SH/{exit} s&&/^\.nf/{b=1;next} s&&/^\.fi/{b=0} s&&b' "$1" | sed 's/\\-/-/g; s/\\e/\\/g'
}
help_of() { # command -> usage lines from --help
  "$NXVK" $1 --help | sed -n '1,/^$/p' | sed '/^$/d; s/^usage: //; s/^       //'
}
for page in man/nxvk.1 man/nxvk-*.1; do
  [ -f "$page" ] || continue
  n=$((n + 1))
  base=$(basename "$page" .1)
  cmd=${base#nxvk}; cmd=${cmd#-}
  want=$(synopsis_of "$page")
  if [ -z "$cmd" ]; then got=$("$NXVK" --help | head -1 | sed 's/^usage: //'); else got=$(help_of "$cmd"); fi
  if [ -n "$want" ] && [ "$want" = "$got" ]; then
    echo "ok $n - $page SYNOPSIS matches 'nxvk $cmd --help'"
  else
    echo "not ok $n - $page SYNOPSIS differs from 'nxvk $cmd --help'"
    diff <(echo "$want") <(echo "$got") | sed 's/^/#   /'
    fail=1
  fi
done
# every subcommand has a page
for cmd in $("$NXVK" --help | awk '/^commands:/{c=1;next} c&&NF{print $1} c&&!NF{exit}'); do
  n=$((n + 1))
  if [ -f "man/nxvk-$cmd.1" ]; then echo "ok $n - man/nxvk-$cmd.1 exists"; else echo "not ok $n - man/nxvk-$cmd.1 is missing"; fail=1; fi
done
echo "1..$n"
exit $fail
