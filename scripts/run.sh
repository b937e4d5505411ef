#!/usr/bin/env bash
# Installs what is missing, builds, and starts the desktop app. Arguments go to the app,
# e.g. ./scripts/run.sh --preset induction --steps 500
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/setup.sh"
"$root/scripts/build.sh"

app="$root/build/bin/attnlab"
if [[ -z "${DISPLAY:-}" && -z "${WAYLAND_DISPLAY:-}" ]]; then
  echo "run: no DISPLAY or WAYLAND_DISPLAY: starting attnlab on a virtual X server (xvfb-run), so no window will appear."
  echo "run: to see it, run this script from a desktop session; to capture it, add --screenshot FILE --quit-after-steps N."
  exec xvfb-run -a -s "-screen 0 1600x1000x24" "$app" "$@"
fi
exec "$app" "$@"
