#!/usr/bin/env bash
# Installs Debian's python3-torch and python3-numpy, which the Hugging Face reference test
# (tests/hf/hf_reference.py) uses to write tiny models and compute their reference forward.
# Does nothing when both import already.
set -euo pipefail
if /usr/bin/python3 -c "import torch, numpy" 2>/dev/null; then exit 0; fi
if [[ $EUID -eq 0 ]]; then as_root=(); elif command -v sudo >/dev/null; then as_root=(sudo); else
  echo "install_python_peers: python3-torch is missing and not root; install python3-torch python3-numpy" >&2
  exit 1
fi
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y python3-torch python3-numpy ||
  { "${as_root[@]}" apt-get update && "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y python3-torch python3-numpy; }
