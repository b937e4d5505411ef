#!/usr/bin/env bash
# Benchmarks this engine beside a PyTorch implementation of the same model (bench/torch_peer.py,
# run twice: as shipped, and with the heap settings attnlab runs with), in one run on this machine
# at the same thread counts, and prints both figures and their ratio against the stronger peer
# as a Markdown table. Not part of the test suite. See "Performance" in README.md.
set -euo pipefail

usage() {
  cat <<'EOF'
usage: bench/run.sh [--reps N] [--steps N] [--threads "1 2"] [--workloads "default larger sigmoid_rope"] [--long]
                    [--no-peer] [--no-decoding] [--no-ui] [--gpt2] [--interpret] [--under-load] [--out FILE]
  --reps N       repetitions (fresh processes) per side, workload and thread count (default 5)
  --steps N      timed training steps per repetition, after 2 warm-up steps (default 10; larger: a third,
                 after 1 warm-up step)
  --threads L    thread counts to measure (default "1 2")
  --workloads L  workloads to run (default: default larger sigmoid_rope; see build/bin/attnlab-bench --list)
  --long         also long_1024 and long_2048 (context 1,024 and 2,048, batch 4): 3 timed steps after 1
                 warm-up, no probe traces, so the peak memory is training's
  --no-peer      measure this engine only
  --no-decoding  skip cached decoding (default model, full cache and each eviction policy at budget 64,
                 N repetitions of 20 passes over the 128-token probe)
  --no-ui        skip the app's UI benchmark (attnlab --benchmark-ui under xvfb-run: timer latency while
                 the induction preset trains 200 steps, then redraws of its 31-token heatmap; the same with a
                 12-layer, 12-head model on a 1,024-token probe, 4 steps)
  --gpt2         also workload gpt2: a GPT-2-small-shaped Hugging Face folder with random weights
                 (bench/hf_gpt2_peer.py --write), prefill of 512 tokens, cached decoding of 128, peak
                 memory, both sides (PyTorch twice: as shipped, and with the heap settings attnlab runs
                 with); lines go to <out>-gpt2.jsonl and are printed as they are
  --interpret    also the causal toolkit (attnlab-bench --interpret --gpt2 1, 2 threads, once): forward with no
                 hook against a hook wanting no site, a residual patching sweep of the induction model (target
                 < 2 s), per-head patching of a GPT-2-small-shaped model on 20 tokens (target < 60 s); lines go
                 to <out>-interpret.jsonl and are printed
  --under-load   also the default workload at 1 and 2 threads beside one busy process (a shell loop that
                 never sleeps), engine only: two threads must not be slower than one; lines go to
                 <out>-load.jsonl, and the ratio is printed
  --out FILE     where the result lines go (default build/bench-results.jsonl)
Environment: BUILD_DIR (default build) is where the engine is built.
EOF
}

reps=5 steps=10 threads="1 2" workloads="default larger sigmoid_rope" peer=1 decoding=1 ui=1 gpt2=0 interpret=0 load=0 out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --reps) reps="$2"; shift 2 ;;
    --steps) steps="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --workloads) workloads="$2"; shift 2 ;;
    --long) workloads="$workloads long_1024 long_2048"; shift ;;
    --no-peer) peer=0; shift ;;
    --no-decoding) decoding=0; shift ;;
    --no-ui) ui=0; shift ;;
    --gpt2) gpt2=1; shift ;;
    --interpret) interpret=1; shift ;;
    --under-load) load=1; shift ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "bench/run.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done

# Both sides use libgomp. Its default spin-wait burns the CPU a descheduled partner thread needs:
# on a loaded 2-core machine, 2-thread steps took about 3.5x the CPU time. Passive waits sleep.
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-PASSIVE}"

root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
out="${out:-$build/bench-results.jsonl}"
python=/usr/bin/python3  # Debian's python3-torch is built for the system interpreter

# --- the engine, built in Release ---
if [ ! -f "$build/CMakeCache.txt" ]; then cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null; fi
targets=attnlab-bench
[ "$ui" = 1 ] && targets="$targets attnlab"
cmake --build "$build" --target $targets -j2 >/dev/null
bench="$build/bin/attnlab-bench"
if [ "$ui" = 1 ] && ! command -v xvfb-run >/dev/null; then
  echo "bench/run.sh: skipping the UI benchmark: xvfb-run is not installed (Debian: xvfb)" >&2
  ui=0
fi

# --- the peer: Debian's PyTorch with OpenBLAS (scripts/install_torch.sh installs it when missing) ---
if [ "$peer" = 1 ] && ! "$root/scripts/install_torch.sh"; then
  echo "bench/run.sh: skipping the PyTorch peer (see the line above); measuring this engine only" >&2
  peer=0
fi

# --- the peer's OpenBLAS kernels ---
# The environment of the machines this was measured on sets OPENBLAS_CORETYPE=Haswell and
# OPENBLAS_L2_SIZE=512, which hold OpenBLAS to its AVX2 kernels on an AVX-512 processor: on
# 2026-12-07's EPYC its sgemm ran at 89-95 GFLOP/s per core at the default workload's shapes that
# way, and at 165-198 with the kernels it picks itself (Cooperlake there). The peer runs with
# OpenBLAS's own choice; PEER_OPENBLAS_CORETYPE forces one.
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
if [ -n "${PEER_OPENBLAS_CORETYPE:-}" ]; then export OPENBLAS_CORETYPE="$PEER_OPENBLAS_CORETYPE"; fi
openblas_core() {
  "$python" -c 'import ctypes; b = ctypes.CDLL("libopenblas.so.0"); b.openblas_get_corename.restype = ctypes.c_char_p; print(b.openblas_get_corename().decode())' 2>/dev/null
}

# --- the machine, as the README table records it ---
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs, $(lscpu | sed -n 's/^L2 cache: *//p') L2," \
     "$(lscpu | sed -n 's/^L3 cache: *//p') L3, $(grep -q avx512f /proc/cpuinfo && echo AVX-512 || echo AVX2)"
[ "$peer" = 1 ] && echo "peer: PyTorch $("$python" -c 'import torch; print(torch.__version__)') with OpenBLAS (pthread, $(openblas_core) kernels)"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg); OMP_WAIT_POLICY=$OMP_WAIT_POLICY for both sides"
echo "repetitions: $reps per side; training steps per repetition: $steps (larger: $(( steps / 3 > 2 ? steps / 3 : 2 ))), after 2 warm-up steps (larger: 1)"

: >"$out"
for w in $workloads; do
  workload_json="$("$bench" --describe "$w")"
  n="$steps" warm=2 traces=20
  if [ "$w" = larger ]; then n=$(( steps / 3 > 2 ? steps / 3 : 2 )) warm=1; fi
  case "$w" in long_*) n=3 warm=1 traces=0 ;; esac
  for t in $threads; do
    for r in $(seq 1 "$reps"); do
      echo "  $w, $t thread(s), repetition $r/$reps" >&2
      ours() { "$bench" --workload "$w" --threads "$t" --steps "$n" --warmup "$warm" --traces "$traces" >>"$out"; }
      theirs() {  # PyTorch as shipped, then with attnlab's heap settings (bench/peer_heap.py)
        for heap in "" --heap-reuse; do
          OMP_NUM_THREADS="$t" OPENBLAS_NUM_THREADS="$t" "$python" "$root/bench/torch_peer.py" \
            --workload "$workload_json" --threads "$t" --steps "$n" --warmup "$warm" --traces "$traces" $heap >>"$out"
        done
      }
      # alternate who goes first so a drift in the machine's load hits both sides alike
      if [ "$peer" = 0 ]; then ours
      elif [ $(( r % 2 )) = 1 ]; then ours; theirs
      else theirs; ours
      fi
    done
  done
done
if [ "$decoding" = 1 ]; then
  for r in $(seq 1 "$reps"); do
    echo "  cached decoding, repetition $r/$reps" >&2
    "$bench" --decoding --passes 20 --budget 64 >>"$out"
  done
fi
if [ "$gpt2" = 1 ]; then
  folder="$build/bench-gpt2-small"
  [ -f "$folder/model.safetensors" ] || "$python" "$root/bench/hf_gpt2_peer.py" --write "$folder"
  : >"${out%.jsonl}-gpt2.jsonl"
  for t in $threads; do
    for r in $(seq 1 "$reps"); do
      echo "  gpt2, $t thread(s), repetition $r/$reps" >&2
      "$bench" --hf "$folder" --threads "$t" --passes 3 >>"${out%.jsonl}-gpt2.jsonl"
      if [ "$peer" = 1 ]; then  # PyTorch as shipped, then with attnlab's heap settings
        for heap in "" --heap-reuse; do
          OMP_NUM_THREADS="$t" OPENBLAS_NUM_THREADS="$t" "$python" "$root/bench/hf_gpt2_peer.py" \
            --run "$folder" --threads "$t" --passes 3 $heap >>"${out%.jsonl}-gpt2.jsonl"
        done
      fi
    done
  done
fi
if [ "$interpret" = 1 ]; then
  echo "  causal toolkit (attnlab-bench --interpret)" >&2
  "$bench" --interpret --threads 2 --passes 20 --gpt2 1 >"${out%.jsonl}-interpret.jsonl"
fi
if [ "$load" = 1 ]; then
  load_out="${out%.jsonl}-load.jsonl"
  : >"$load_out"
  bash -c 'while :; do :; done' &
  busy=$!
  trap 'kill "$busy" 2>/dev/null || true' EXIT
  for r in $(seq 1 "$reps"); do
    for t in 1 2; do
      echo "  default beside a busy process, $t thread(s), repetition $r/$reps" >&2
      # 40 warm-up steps pass the thread governor's first probe (engine/train/thread_governor.h)
      "$bench" --workload default --threads "$t" --warmup 40 --steps "$steps" --traces 0 >>"$load_out"
    done
  done
  kill "$busy"
fi
ui_table=""
if [ "$ui" = 1 ]; then
  echo "  UI benchmark (attnlab --benchmark-ui under xvfb-run)" >&2
  ui_table="$(xvfb-run -a -s "-screen 0 1600x1000x24" "$build/bin/attnlab" --benchmark-ui --steps 200 \
              --out "${out%.jsonl}-ui.json" 2>/dev/null)" || { echo "bench/run.sh: the UI benchmark failed" >&2; ui_table=""; }
  echo "  UI benchmark, 12 x 12 heads on a 1,024-token probe" >&2
  large="$(xvfb-run -a -s "-screen 0 1600x1000x24" "$build/bin/attnlab" --benchmark-ui --steps 4 \
              --set model.n_layers=12 --set model.n_heads=12 --set model.d_model=96 --set model.context=1024 --set train.batch=2 \
              --set task.settings.length=513 --set task.settings.vary_length=0 \
              --out "${out%.jsonl}-ui-large.json" 2>/dev/null)" || { echo "bench/run.sh: the large UI benchmark failed" >&2; large=""; }
  ui_table="$ui_table${large:+

$large}"
fi
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
"$bench" --summarize "$out"
if [ "$gpt2" = 1 ]; then echo; echo "workload gpt2 (one JSON line per run):"; cat "${out%.jsonl}-gpt2.jsonl"; fi
if [ "$interpret" = 1 ]; then echo; echo "causal toolkit (one JSON line per figure):"; cat "${out%.jsonl}-interpret.jsonl"; fi
if [ "$load" = 1 ]; then
  echo
  echo "default beside one busy process (engine only):"
  "$bench" --summarize "$load_out" | grep -E '^\| (workload|---|default \| [12] \| training tokens/s)'
  "$python" - "$load_out" <<'PY'
import json, statistics, sys
rates = {1: [], 2: []}
for line in open(sys.argv[1]):
    j = json.loads(line)
    rates[j["threads"]].append(j["tokens_per_second"]["median"])
one, two = statistics.median(rates[1]), statistics.median(rates[2])
print(f"2 threads / 1 thread beside the busy process: {two / one:.2f}x (must be >= 1: {'met' if two >= one else 'not met'})")
PY
fi
if [ -n "$ui_table" ]; then echo; echo "$ui_table"; fi
