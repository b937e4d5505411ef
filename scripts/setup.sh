#!/usr/bin/env bash
# Installs the Debian 12 packages Attention Lab needs to build, run and test.
# Does nothing (and needs no network) when every package is already installed.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache
  qt6-base-dev qt6-charts-dev qt6-svg-dev libgl-dev
  libvtk9-dev libeigen3-dev nlohmann-json3-dev
  xvfb xauth libgl1-mesa-dri fonts-dejavu-core imagemagick
  nodejs
  unicode-data  # the Unicode Character Database files scripts/generate_normalization_tables.py reads
  clang libclang-rt-dev libomp-dev  # the sanitizer and libFuzzer build (scripts/test-sanitizers.sh, scripts/fuzz.sh)
)

missing=()
for package in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$package")
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "setup: all ${#packages[@]} required packages are installed"
  exit 0
fi

echo "setup: installing ${missing[*]}"
if [[ $EUID -eq 0 ]]; then
  as_root=()
elif command -v sudo >/dev/null; then
  as_root=(sudo)
else
  echo "setup: missing packages (${missing[*]}) and not root; run as root or install sudo" >&2
  exit 1
fi
"${as_root[@]}" apt-get update
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"
