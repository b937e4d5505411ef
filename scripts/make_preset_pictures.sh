#!/usr/bin/env bash
# Makes the welcome page's preset pictures (resources/welcome/NAME.png) with the app itself: each
# preset trains for a tenth of its steps (at least 60, at most 150), then its Model view (every head's map of
# the probe) is exported. Nothing is drawn by hand: rerun this after changing a preset, then rebuild.
#   scripts/make_preset_pictures.sh [build dir]   (needs xvfb-run; a few minutes on 2 cores)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
app="${1:-$root/build}/bin/attnlab"
out="$root/resources/welcome"
mkdir -p "$out"
for preset in "$root"/resources/presets/*.json; do
  name="$(basename "$preset" .json)"
  steps="$(python3 -c "import json,sys; s=json.load(open(sys.argv[1]))['train']['steps']; print(max(60, min(150, s // 10)))" "$preset")"
  echo "$name: $steps steps"
  OMP_WAIT_POLICY=passive xvfb-run -a -s "-screen 0 1600x1000x24" \
    "$app" --preset "$name" --quit-after-steps "$steps" --view model --export "$out/$name.png" >/dev/null
done
