#!/usr/bin/env bash
# Makes the user guide's pictures (resources/guide/images/*.png) with the app itself, 720 pixels
# wide so they fit the guide window: every view of the induction preset after 300 steps (layer 2,
# head 1: an induction head), the first window, and a comparison. Nothing is drawn by hand: rerun
# this after changing a view, then rebuild (the pictures are embedded with the guide).
#   scripts/make_guide_pictures.sh [build dir]   (needs xvfb-run and ImageMagick; a few minutes on 2 cores)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
app="${1:-$root/build}/bin/attnlab"
out="$root/resources/guide/images"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
run() { OMP_WAIT_POLICY=passive xvfb-run -a -s "-screen 0 1600x1000x24" "$app" "$@" >/dev/null; }

run --preset induction --layer 2 --head 1 --quit-after-steps 300 --export "$work/"
# The explainer's export is its whole scrolled page; the guide shows the window around its first stages.
rm "$work/explainer.png"
run --preset induction --layer 2 --head 1 --quit-after-steps 300 --view explainer --screenshot "$work/explainer.png"
run --quit-after-steps 150 --screenshot "$work/window.png"
run --compare gated_softmax,gated_sigmoid --view attention --layer 2 --head 1 --quit-after-steps 400 --screenshot "$work/comparison.png"

mkdir -p "$out"
rm -f "$out"/*.png
for picture in "$work"/*.png; do
  convert "$picture" -resize '720x>' -strip "$out/$(basename "$picture")"
done
ls "$out"
