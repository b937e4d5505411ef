#!/usr/bin/env bash
# Runs the libFuzzer targets of tests/fuzz (one per reader of outside files), built with
# AddressSanitizer and UndefinedBehaviorSanitizer in build-asan/, each for a bounded number of
# executions, and prints per target: executions, crashes (any sanitizer report, an escaped
# exception, an allocation over the memory limit), hangs (an input taking over --timeout seconds)
# and new coverage (edges and features this run added to what the seeds and the kept corpus
# reach). Seeds are valid files of each format, written by fuzz_make_seeds; what a run adds is
# kept in build-asan/fuzz/corpus/ and grows from campaign to campaign. Findings go to
# build-asan/fuzz/findings/ (replay one with build-asan/bin/fuzz_NAME FILE; each run of a target
# clears its old ones). Exits non-zero when any target crashed or hung.
# Usage: scripts/fuzz.sh [--runs N] [--timeout S] [--only a,b] [--table FILE]   (default 100000 runs)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
runs=100000 timeout=10 only="" table=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --timeout) timeout="$2"; shift 2 ;;
    --only) only="$2"; shift 2 ;;
    --table) table="$2"; shift 2 ;;
    *) echo "fuzz: unknown argument '$1' (--runs N, --timeout S, --only a,b, --table FILE)" >&2; exit 2 ;;
  esac
done

source "$root/scripts/sanitizer-configure.sh"
build="$root/build-asan"
configure_asan
cmake --build "$build" -j"$(nproc)" --target fuzz_all

work="$build/fuzz"
rm -rf "$work/seeds" "$work/logs"
mkdir -p "$work/corpus" "$work/findings" "$work/logs"
"$build/bin/fuzz_make_seeds" "$work/seeds"

targets=()
for bin in "$build"/bin/fuzz_*; do
  name="${bin##*/fuzz_}"
  [[ "$name" == make_seeds ]] && continue
  [[ -z "$only" || ",$only," == *",$name,"* ]] && targets+=("$name")
done

# The stat lines libFuzzer prints with -print_final_stats=1, and its "cov: N ft: M" progress lines.
final_stat() { sed -n "s/^stat::$2: *//p" "$1" | tail -1; }
findings() { ls "$work/findings" | grep -cE "^$1-($2)" || true; }
progress() { grep -E "^#[0-9]+[[:space:]]+$2 " "$1" | sed -n "s/.* cov: \([0-9]*\) ft: \([0-9]*\).*/\1 \2/p" | tail -1; }

rows=() status=0 started=$SECONDS
for name in "${targets[@]}"; do
  corpus="$work/corpus/$name" seeds="$work/seeds/$name" log="$work/logs/$name.log"
  mkdir -p "$corpus" "$seeds"
  rm -f "$work/findings/$name-"*
  t0=$SECONDS
  ASAN_OPTIONS="detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1" \
  UBSAN_OPTIONS="print_stacktrace=1" \
    "$build/bin/fuzz_$name" -runs="$runs" -timeout="$timeout" -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$work/findings/$name-" "$corpus" "$seeds" >"$log" 2>&1 || true
  seconds=$((SECONDS - t0))
  crashes=$(findings "$name" "crash|leak|oom|deadly")
  hangs=$(findings "$name" "timeout|slow")
  executions=$(final_stat "$log" number_of_executed_units)
  read -r cov0 ft0 < <(progress "$log" INITED || true)
  read -r cov1 ft1 < <(progress "$log" DONE || progress "$log" '(NEW|REDUCE|pulse)' || true)
  gained="+$(( ${cov1:-0} - ${cov0:-0} )) edges, +$(( ${ft1:-0} - ${ft0:-0} )) features (now ${cov1:-?} edges)"
  if [[ $((crashes + hangs)) -gt 0 ]]; then
    status=1
    echo "fuzz: $name: $crashes crash(es), $hangs hang(s); the report is in $log:" >&2
    grep -m1 -E "ERROR: (AddressSanitizer|libFuzzer|LeakSanitizer)|runtime error|==ERROR" "$log" >&2 || tail -5 "$log" >&2
  fi
  rows+=("| $name | ${executions:-0} | $crashes | $hangs | $gained | ${seconds}s |")
  echo "fuzz: $name: ${executions:-0} executions, $crashes crash(es), $hangs hang(s), ${seconds}s"
done

report=$(
  echo "| target | executions | crashes | hangs | new coverage | time |"
  echo "|---|---:|---:|---:|---|---:|"
  printf '%s\n' "${rows[@]}"
  echo
  echo "$(date -u +%Y-%m-%d) · $runs runs per target · $((SECONDS - started)) s in all · load average $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
)
echo "$report"
[[ -n "$table" ]] && echo "$report" >"$table"
if [[ $status -ne 0 ]]; then
  echo "fuzz: the inputs that crashed or hung are in $work/findings/" >&2
fi
exit "$status"
