# Sourced by scripts/test-sanitizers.sh and scripts/fuzz.sh: configure_sanitized BUILD FLAGS [CMAKE ARGS...]
# configures a headless build folder with the sanitizer FLAGS. build-asan/ is clang's and also
# holds the libFuzzer targets, so one instrumented build of the engine serves the tests and the fuzzers.
# -O1 keeps the instrumented tests fast enough for CI while leaving the stacks readable; -g1 gives
# line numbers at a fraction of full debug info's compile time.
# As scripts/build.sh: cache entries shared by every clone of the repository.
export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1
# Qt Test defines each test's absolute build and source folder (read only by QFINDTESTDATA, which the
# tests do not use): left out of the hash, so a clone elsewhere reuses the compiled tests too.
export CCACHE_IGNOREOPTIONS="-DQT_TESTCASE_BUILDDIR=* -DQT_TESTCASE_SOURCEDIR=*"

configure_sanitized() {
  local build="$1" flags="$2"
  local args=(cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTNLAB_HEADLESS=ON
              "${@:3}"
              "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" "-DCMAKE_CXX_FLAGS=$flags" "-DCMAKE_EXE_LINKER_FLAGS=$flags")
  if command -v ccache >/dev/null; then
    args+=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  fi
  if [[ ! -f "$build/CMakeCache.txt" ]] && command -v ninja >/dev/null; then
    args+=(-G Ninja)
  fi
  "${args[@]}" >/dev/null
}

asan_flags="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
configure_asan() {
  configure_sanitized "$root/build-asan" "$asan_flags" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DATTNLAB_FUZZ=ON
}
