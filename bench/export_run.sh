#!/usr/bin/env bash
# Training throughput of the PyTorch export (train.py on 1 and 2 CPU processes under torchrun,
# one thread each) beside the lab's own trainer (attnlab-cli train, 1 and 2 threads), on the same
# experiment and batches. Prints the median tokens/s of each over the steps after the first 10, and
# each whole run's wall and CPU seconds.
# Not part of the test suite; run it on an idle machine. See "Scaling out" in README.md.
#   bench/export_run.sh [--preset NAME] [--steps N] [--set KEY=VALUE ...]   (defaults: induction, 200)
set -euo pipefail
preset=induction steps=200 sets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --preset) preset="$2"; shift 2 ;;
    --steps) steps="$2"; shift 2 ;;
    --set) sets+=(--set "$2"); shift 2 ;;
    *) echo "bench/export_run.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
cli="$build/bin/attnlab-cli"
"$root/scripts/install_torch.sh"
cmake --build "$build" --target attnlab-cli -j2 >/dev/null
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export OMP_WAIT_POLICY=PASSIVE GLOO_SOCKET_IFNAME=lo OMP_NUM_THREADS=1

"$cli" export pytorch --preset "$preset" "${sets[@]}" --steps "$steps" --out "$work/export" >/dev/null
"$cli" data --preset "$preset" "${sets[@]}" --tokens 2000000 --out "$work/data" >/dev/null  # train.py wraps around when it runs out
"$cli" export pytorch --preset "$preset" "${sets[@]}" --scale "" 2>/dev/null | sed -n 2,3p || true  # the shape and its parameters

# median of the tokens_per_second column (7) after the first 10 rows of a history.csv
median() { tail -n +12 "$1" | cut -d, -f7 | sort -g | awk '{v[NR]=$1} END {print (NR ? v[int((NR+1)/2)] : "n/a")}'; }

# Wall and CPU seconds (user + system, children included) of one whole run, start-up included: on a
# shared machine the CPU time says what the run cost, the wall time what the others left it.
timed() {
  local TIMEFORMAT='%R %U %S'
  { time "$@" >/dev/null 2>"$work/stderr"; } 2>&1 | tail -1
}
tokens=$(/usr/bin/python3 -c "import json; d = json.load(open('$work/data/data.json')); print($steps * d['batch'] * d['seq_len'])")
report() {  # label, history.csv, "wall user sys"
  read -r wall user sys <<<"$3"
  awk -v l="$1" -v m="$(median "$2")" -v w="$wall" -v u="$user" -v s="$sys" -v t="$tokens" \
    'BEGIN { printf "%s: %s tokens/s (median step); whole run %.1f s wall, %.1f s CPU, %.0f tokens per CPU-second\n", l, m, w, u + s, t / (u + s) }'
}

for threads in 1 2; do
  report "lab trainer, $threads thread(s)" "$work/lab$threads/history.csv" \
    "$(timed "$cli" train --preset "$preset" "${sets[@]}" --steps "$steps" --threads "$threads" --quiet --out "$work/lab$threads")"
done
for procs in 1 2; do
  report "PyTorch export, $procs process(es) x 1 thread" "$work/run$procs/history.csv" \
    "$(timed /usr/bin/python3 -m torch.distributed.run --standalone --nproc_per_node "$procs" --redirects 1 --tee 1 \
      --log_dir "$work/logs$procs" "$work/export/train.py" --data "$work/data" --out "$work/run$procs" --threads 1)"
done
