#!/bin/sh
# scripts/bundle.sh - nxvk plus the shared libraries it links (cJSON, libcsv)
# in bundle/, for a machine that has a GPU driver but no compiler or
# packages.  The Vulkan loader is not bundled: volk opens libvulkan.so.1 from
# the system at run time.  Run there as: bundle/run.sh info
set -eu
cd "$(dirname "$0")/.."
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
