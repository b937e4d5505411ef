#!/usr/bin/env bash
# Makes Debian's PyTorch available to /usr/bin/python3 (python3-torch with OpenBLAS: the reference
# BLAS is about 16x slower), installing it with apt when missing. Used by the tests that run the
# PyTorch export (tests/test_export_*) and by bench/run.sh. Exits 0 when torch imports, else 1 with
# one line saying why. Needs no network when the packages are already installed.
set -uo pipefail
python=/usr/bin/python3
packages=(python3-torch python3-numpy libopenblas0-pthread)

ready() {
  [ -x "$python" ] && "$python" -c 'import torch' 2>/dev/null && dpkg -s libopenblas0-pthread >/dev/null 2>&1
}
ready && exit 0

as_root=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then as_root="sudo -n"; else
    echo "install_torch: python3-torch is not installed and installing it needs root or sudo (apt-get install ${packages[*]})" >&2
    exit 1
  fi
fi
echo "install_torch: installing ${packages[*]} with apt..." >&2
export DEBIAN_FRONTEND=noninteractive
$as_root apt-get install -y --no-install-recommends "${packages[@]}" >/dev/null 2>&1 ||
  { $as_root apt-get update >/dev/null 2>&1 && $as_root apt-get install -y --no-install-recommends "${packages[@]}" >/dev/null 2>&1; }
ready && exit 0
echo "install_torch: apt could not install ${packages[*]}" >&2
exit 1
