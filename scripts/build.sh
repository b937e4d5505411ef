#!/usr/bin/env bash
# Configures (Release) and builds everything into build/ at the repository root, or only the
# targets named:  scripts/build.sh [TARGET...]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$root/build"
# Paths below the checkout are hashed relative to the build folder, so a clean clone elsewhere (as
# CI makes) reuses what any earlier clone or worktree compiled.
export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1
# Qt Test defines each test's absolute build and source folder (read only by QFINDTESTDATA, which the
# tests do not use): left out of the hash, so a clone elsewhere reuses the compiled tests too.
export CCACHE_IGNOREOPTIONS="-DQT_TESTCASE_BUILDDIR=* -DQT_TESTCASE_SOURCEDIR=*"

configure=(cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release)
# ccache, when installed, makes rebuilds of unchanged files (other branches, clean clones) instant.
if command -v ccache >/dev/null; then
  configure+=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
# Ninja only for a fresh build folder: an existing one keeps the generator it was made with.
if [[ ! -f "$build/CMakeCache.txt" ]] && command -v ninja >/dev/null; then
  configure+=(-G Ninja)
fi
"${configure[@]}"
targets=()
[[ $# -gt 0 ]] && targets=(--target "$@")
cmake --build "$build" -j"$(nproc)" "${targets[@]}"
