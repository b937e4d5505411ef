#!/usr/bin/env bash
# The Debian package: cpack builds it from the build folder, it unpacks into a temporary root
# (as installing it would lay it out), and the programs start from there.
set -euo pipefail
build=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$build"
cpack -G DEB -B "$tmp/pkg" > "$tmp/cpack.log" 2>&1 || { cat "$tmp/cpack.log"; exit 1; }
deb=$(ls "$tmp"/pkg/*.deb)
dpkg-deb -x "$deb" "$tmp/root"
for f in usr/bin/attnlab usr/bin/attnlab-cli usr/share/applications/attnlab.desktop \
         usr/share/icons/hicolor/scalable/apps/attnlab.svg usr/share/doc/attnlab/guide.md; do
  [ -e "$tmp/root/$f" ] || { echo "the package lacks /$f"; exit 1; }
done
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
grep -q libqt6gui6 <<< "$depends" || { echo "the package does not depend on Qt 6 (whose libqt6gui6 holds the X11 plugin)"; exit 1; }
grep -q '^Exec=attnlab$' "$tmp/root/usr/share/applications/attnlab.desktop"
# (output captured first: grep -q stopping early would break the pipe under pipefail)
listed=$("$tmp/root/usr/bin/attnlab-cli" list)
grep -q softmax <<< "$listed" || { echo "attnlab-cli list from the package printed no softmax"; exit 1; }
tours=$(QT_QPA_PLATFORM=offscreen "$tmp/root/usr/bin/attnlab" --tours 2>/dev/null)
grep -q induction <<< "$tours" || { echo "attnlab --tours from the package listed no tour"; exit 1; }
echo "package $(basename "$deb"): $(du -h "$deb" | cut -f1), programs start from the unpacked root"
