#!/usr/bin/env bash
# CI's second stage (.ci/run, after scripts/test.sh): one clang build folder, build-asan/, with
# AddressSanitizer and UndefinedBehaviorSanitizer, holding the engine, the CLI, every headless test
# and every fuzz target; runs every headless test but the three that train for thousands of steps
# (any sanitizer report fails them) and each fuzz target for ATTNLAB_CI_FUZZ_RUNS executions
# (default 2000); then ThreadSanitizer on the worker-thread tests of models/ (build-tsan/, without
# OpenMP). Left out: test_variant_learning (over 8 minutes instrumented), test_learning (7 minutes
# on a 2-core AMD EPYC) and test_interpret_induction (1.7 minutes); the steps they take run the
# code the gradient, invariant and training suites check under ASan.
# ATTNLAB_ASAN_TESTS="test_a ..." runs only those instead (test-sanitizers.sh).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/setup.sh"
status=0
[[ -n "${ATTNLAB_ASAN_TESTS:-}" ]] || export ATTNLAB_ASAN_SKIP="${ATTNLAB_ASAN_SKIP-test_variant_learning test_learning test_interpret_induction}"
"$root/scripts/test-sanitizers.sh" asan || status=1
"$root/scripts/fuzz.sh" --runs "${ATTNLAB_CI_FUZZ_RUNS:-2000}" || status=1
"$root/scripts/test-sanitizers.sh" tsan || status=1
exit "$status"
