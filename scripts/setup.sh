#!/bin/sh
# scripts/setup.sh - install what nxvk needs on Debian 12, only what is
# missing (safe to run again).  Needs root or sudo for apt-get.
set -eu

PACKAGES="make gcc clang libc6-dev pkg-config
libvulkan-dev libvulkan-volk-dev glslang-tools glslang-dev spirv-tools
libcjson-dev libcsv-dev zlib1g-dev mesa-vulkan-drivers vulkan-validationlayers vulkan-tools
python3 python3-numpy elixir erlang-dev libclang-rt-14-dev zsh"

missing=""
for p in $PACKAGES; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    case " $missing " in *" $p "*) ;; *) missing="$missing $p" ;; esac
  fi
done

if [ -z "$missing" ]; then
  echo "setup: every package is installed"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO=sudo; else
    echo "setup: need root (or sudo) to install:$missing" >&2
    exit 1
  fi
fi
echo "setup: installing$missing"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
echo "setup: done"
