#!/usr/bin/env bash
# CI's second stage (.ci/run, after scripts/test.sh): one clang build folder, build-asan/, with
# AddressSanitizer and UndefinedBehaviorSanitizer, holding the engine tests that read outside files
# and every fuzz target; runs those tests (any sanitizer report fails them) and each fuzz target for
# ATTNLAB_CI_FUZZ_RUNS executions (default 2000); then ThreadSanitizer on the worker-thread tests of
# models/ (build-tsan/, without OpenMP). The ASan pass over every headless test stays in
# scripts/test-sanitizers.sh: it would push CI past its budget on 2 cores (README, "Sanitizers and fuzzing").
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/setup.sh"
status=0
ATTNLAB_ASAN_TESTS="${ATTNLAB_ASAN_TESTS:-test_hostile_inputs test_hostile_hf_inputs test_fuzz_regressions test_checkpoint_files test_config test_comparison_file test_tokenizer}" \
  "$root/scripts/test-sanitizers.sh" asan || status=1
"$root/scripts/fuzz.sh" --runs "${ATTNLAB_CI_FUZZ_RUNS:-2000}" || status=1
"$root/scripts/test-sanitizers.sh" tsan || status=1
exit "$status"
