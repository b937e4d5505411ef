#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test on a virtual X server (the GUI tests need
# one). Extra arguments go to ctest, e.g. ./scripts/test.sh -R test_app_smoke. Exits with ctest's code.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
# The tests that need Debian's PyTorch install it when missing; doing it once here keeps two of
# them (ctest -j) from racing for apt's lock. A failure is theirs to report.
"$root/scripts/install_torch.sh" || true
"$root/scripts/install_python_peers.sh" || true

# ctest's exit code goes through a file: xvfb-run can replace it with its own when it fails to
# clean up after itself, which must not turn a passing run into a failing one or the reverse.
status_file="$(mktemp)"
trap 'rm -f "$status_file"' EXIT
cd "$root/build"
xvfb-run -a -s "-screen 0 1600x1000x24" \
  bash -c 'status=0; ctest --output-on-failure "${@:2}" || status=$?; echo "$status" > "$1"' _ "$status_file" "$@" || true
status="$(cat "$status_file")"
if [[ -z "$status" ]]; then
  echo "test: ctest did not run (xvfb-run failed to start a virtual X server)" >&2
  exit 1
fi
exit "$status"
