#!/bin/sh
# scripts/bundle.sh [--nx] - nxvk plus the shared libraries it links (cJSON,
# libcsv) in bundle/, for a machine that has a GPU driver but no compiler or
# packages.  The Vulkan loader is not bundled: volk opens libvulkan.so.1 from
# the system at run time.  Run there as: bundle/run.sh info
#
# --nx also packs in bundle/nx.tar.gz (18 MiB; 28 MiB unpacked: the device
# tool carries 64 MiB in all, and a tarball keeps the modification times mix
# compares and the one symbolic link) what the Elixir benches need on a
# machine with no Erlang or Elixir; unpacked (tar xzf bundle/nx.tar.gz -C
# bundle) it is:
#   bundle/nx/erlang, bundle/nx/elixir   Debian 12's erlang-base and elixir
#       packages (the release the project is built with here), fetched with
#       `apt-get download` into .debs/ (ignored) and unpacked with dpkg -x;
#       erl made relocatable, the docs and headers left out
#   bundle/nx/lib       the libraries beam.smp links beyond libc (libtinfo)
#   bundle/nx/nxvk/elixir  the elixir/ project compiled (MIX_ENV=dev, the
#       NIF built), its _build with Nx 0.7.3, complex and telemetry
#   bundle/nx/shared/deps  their sources, where the project's mix.exs looks
#   bundle/nx/with-env CMD...  runs CMD with PATH (the bundle's erl, elixir
#       and mix first), LD_LIBRARY_PATH, NXVK_BIN (bundle/nxvk), MIX_HOME
# There, from the repository root (scripts/gpu.sh nx OUTDIR does all this):
#   tar xzf bundle/nx.tar.gz -C bundle && cd bundle/nx/nxvk/elixir
#   ../../with-env mix run bench/nx_ops.exs --sizes 1K,1M,16M
#   ../../with-env mix run bench/serving.exs --devices 0,1 --requests 20000 --width 1024
set -eu
cd "$(dirname "$0")/.."
nx=false
case "${1:-}" in
--nx) nx=true ;;
"") ;;
*) echo "usage: scripts/bundle.sh [--nx]" >&2; exit 2 ;;
esac
[ -x nxvk ] || make -j2 nxvk
rm -rf bundle
mkdir -p bundle/lib
cp nxvk bundle/
# no debug sections: the device tool carries 64 MiB in all (tree included);
# the unstripped ./nxvk stays here for symbolizing a crash
strip bundle/nxvk 2>/dev/null || true
# every non-libc library nxvk links, resolved here
ldd nxvk | awk '/=> \// {print $3}' | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so*|libm.so*|libpthread.so*|libdl.so*|ld-linux*|libgcc_s.so*) ;;
    *) cp -L "$lib" bundle/lib/ ;;
  esac
done
cat > bundle/run.sh <<'RUN'
#!/bin/sh
here=$(cd "$(dirname "$0")" && pwd)
LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "$here/nxvk" "$@"
RUN
chmod +x bundle/run.sh
echo "bundle/: $(ls bundle/lib | tr '\n' ' ')"
$nx || exit 0

# ------------------------------------------------------------- --nx
B=bundle/nx
mkdir -p .debs "$B/lib" "$B/shared/deps"
# the packages: the erlang-base and elixir this machine's apt knows (the
# ones installed here, so the _build below runs on them)
for p in erlang-base elixir; do
  ls .debs/${p}_*.deb > /dev/null 2>&1 || (cd .debs && apt-get download "$p" 2>&1 | grep -v '^W: Download is performed unsandboxed')
done
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
for d in .debs/erlang-base_*.deb .debs/elixir_*.deb; do dpkg -x "$d" "$stage"; done
cp -a "$stage/usr/lib/erlang" "$B/erlang"
cp -a "$stage/usr/lib/elixir" "$B/elixir"
# not needed at run time: erts C headers and erl_interface (for C nodes), sources
rm -rf "$B"/erlang/usr "$B"/erlang/lib/erl_interface-* "$B"/erlang/erts-*/include "$B"/erlang/erts-*/src \
  "$B"/erlang/lib/*/src "$B"/erlang/misc
erts=$(cd "$B/erlang" && ls -d erts-*)
# Debian's erl names /usr/lib/erlang: this one finds its root from where it is
for f in "$B/erlang/bin/erl" "$B/erlang/$erts/bin/erl"; do
  cat > "$f" <<ERL
#!/bin/sh
# relocatable erl (scripts/bundle.sh): the root is the folder above bin/
ROOTDIR=\$(cd "\$(dirname "\$0")/.." && pwd)
case "\$ROOTDIR" in */$erts) ROOTDIR=\$(dirname "\$ROOTDIR") ;; esac
BINDIR="\$ROOTDIR/$erts/bin"
EMU=beam
PROGNAME=erl
export EMU ROOTDIR BINDIR PROGNAME
exec "\$BINDIR/erlexec" \${1+"\$@"}
ERL
  chmod +x "$f"
done
# beam.smp's libraries beyond libc, libstdc++ and zlib (bundle/lib has those)
ldd "$B/erlang/$erts/bin/beam.smp" | awk '/=> \// {print $3}' | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so*|libm.so*|libpthread.so*|libdl.so*|ld-linux*|libgcc_s.so*|librt.so*) ;;
    *) [ -f "bundle/lib/$(basename "$lib")" ] || cp -L "$lib" "$B/lib/" ;;
  esac
done

# the app, compiled by the bundle's own runtime (the same release as here)
cat > "$B/with-env" <<'ENV'
#!/bin/sh
# bundle/nx/with-env CMD [ARG...]: CMD with the bundle's Erlang, Elixir and
# nxvk first (scripts/bundle.sh --nx)
nx_root=$(cd "$(dirname "$0")" && pwd)
PATH="$nx_root/erlang/bin:$nx_root/elixir/bin:$PATH"
LD_LIBRARY_PATH="$nx_root/lib:$nx_root/../lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
NXVK_BIN="$nx_root/../nxvk"
HOME=${HOME:-$nx_root}
MIX_HOME=${MIX_HOME:-$nx_root/mix_home}
LANG=${LANG:-C.UTF-8}
export PATH LD_LIBRARY_PATH NXVK_BIN HOME MIX_HOME LANG
exec "$@"
ENV
chmod +x "$B/with-env"
for dep in nx complex telemetry; do
  mkdir -p "$B/shared/deps/$dep"
  (cd ../shared/deps/$dep && tar cf - $(ls -d mix.exs lib src include 2>/dev/null)) |
    (cd "$B/shared/deps/$dep" && tar xpf -)
done
app=$B/nxvk/elixir
mkdir -p "$app"
(cd elixir && tar cf - mix.exs lib bench c_src) | (cd "$app" && tar xpf -)
# compiled in place, in a clean environment with the bundle's runtime
# (its mix.exs finds Nx at ../../shared/deps/nx: bundle/nx/nxvk/elixir and
# bundle/nx/shared/deps are laid out as the repository and ../shared are)
(cd "$app" && env -i PATH=/usr/bin:/bin ../../with-env mix compile) > "$B/compile.log" 2>&1 ||
  { cat "$B/compile.log"; exit 1; }
# priv is a link into the app's folder in _build: make it a copy
for l in "$app"/_build/dev/lib/*/priv; do
  [ -L "$l" ] || continue
  t=$(readlink -f "$l"); rm "$l"; cp -a "$t" "$l"
done
rm -rf "$B/mix_home" "$B/compile.log"
tar czf bundle/nx.tar.gz -C bundle nx
echo "bundle/nx.tar.gz: $(du -sh bundle/nx.tar.gz | cut -f1), unpacked $(du -sh "$B" | cut -f1) (erlang $(cat "$B/erlang/releases/"*/OTP_VERSION 2>/dev/null | head -1), $(ls "$B/elixir/lib/elixir/ebin/elixir.app" > /dev/null && grep -o '{vsn,"[^"]*"}' "$B/elixir/lib/elixir/ebin/elixir.app"))"
rm -rf "$B"
