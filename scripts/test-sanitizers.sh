#!/usr/bin/env bash
# Builds the engine, models/, the CLI and their non-GUI tests with AddressSanitizer and
# UndefinedBehaviorSanitizer (build-asan/), and the worker-thread tests of models/ with
# ThreadSanitizer (build-tsan/), then runs them. Any sanitizer report fails: every report stops its
# process (halt_on_error) and is also written under build-*/sanitizer-reports/, which must stay
# empty, so a report from a child process (the CLI tests run attnlab-cli) counts too.
# Usage: scripts/test-sanitizers.sh [asan|tsan]...  (default: both). Exits non-zero on any failure.
# ATTNLAB_ASAN_TESTS="test_a test_b" builds and runs only those tests in the asan pass;
# ATTNLAB_ASAN_SKIP="test_c test_d" builds everything and runs every test but those (CI's choice).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
kinds=("$@")
[[ ${#kinds[@]} -gt 0 ]] || kinds=(asan tsan)

source "$root/scripts/sanitizer-configure.sh"

# Runs ctest in $1 with the remaining arguments; fails if a test fails or any report was written.
run_checked() {
  local build="$1"
  shift
  local reports="$build/sanitizer-reports"
  rm -rf "$reports" && mkdir -p "$reports"
  local status=0
  (cd "$build" && ctest --output-on-failure "$@") || status=$?
  if compgen -G "$reports/*" >/dev/null; then
    echo "sanitizers: reports in $reports:" >&2
    cat "$reports"/* >&2
    status=1
  fi
  return "$status"
}

status=0
for kind in "${kinds[@]}"; do
  case "$kind" in
    asan)
      build="$root/build-asan"
      configure_asan
      selected=()
      if [[ -n "${ATTNLAB_ASAN_TESTS:-}" ]]; then
        read -ra names <<<"$ATTNLAB_ASAN_TESTS"
        cmake --build "$build" -j"$(nproc)" --target "${names[@]}"
        selected=(-R "^($(IFS='|'; echo "${names[*]}"))\$")
      else
        cmake --build "$build" -j"$(nproc)"
        if [[ -n "${ATTNLAB_ASAN_SKIP:-}" ]]; then
          read -ra names <<<"$ATTNLAB_ASAN_SKIP"
          selected=(-E "^($(IFS='|'; echo "${names[*]}"))\$")
        fi
      fi
      reports="$build/sanitizer-reports"
      ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:log_path=$reports/asan" \
      UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:log_path=$reports/ubsan" \
        run_checked "$build" "${selected[@]}" || status=1
      ;;
    tsan)
      build="$root/build-tsan"
      # without OpenMP: every thread is then the program's own (README, "Sanitizers and fuzzing")
      configure_sanitized "$build" "-fsanitize=thread -fno-omit-frame-pointer" -DATTNLAB_OPENMP=OFF
      cmake --build "$build" -j"$(nproc)" --target test_background_job test_training_session
      reports="$build/sanitizer-reports"
      TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$root/scripts/tsan.supp:log_path=$reports/tsan" \
        run_checked "$build" -R '^(test_background_job|test_training_session)$' || status=1
      ;;
    *)
      echo "test-sanitizers: unknown kind '$kind' (asan or tsan)" >&2
      exit 2
      ;;
  esac
done
exit "$status"
