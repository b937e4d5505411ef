// attnlab-bench: one repetition of a benchmark workload on this engine, printed as one JSON line
// (bench/run.sh runs it beside bench/torch_peer.py and summarises both sides).
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/heap_reuse.h"
#include "core/openmp_wait.h"
#include "decoding.h"
#include "gemm_products.h"
#include "hf_model.h"
#include "interpret.h"
#include "io/config_json.h"
#include "model_flops.h"
#include "peak.h"
#include "summary.h"
#include "train/benchmark.h"
#include "variants.h"
#include "workloads.h"

namespace {

constexpr const char* kUsage =
    "usage: attnlab-bench --list\n"
    "       attnlab-bench --describe WORKLOAD [--set KEY=VALUE]...\n"
    "                                                   the workload's shapes as JSON (for torch_peer.py)\n"
    "       attnlab-bench --workload WORKLOAD [--set KEY=VALUE]... [--threads N] [--steps N] [--warmup N] [--traces N]\n"
    "                                                   one repetition, printed as one JSON line; --set changes the\n"
    "                                                   workload's configuration (as attnlab-cli's --set), after its own\n"
    "       attnlab-bench --variants all|A,B,.. [--threads N] [--steps N] [--warmup N]\n"
    "                                                   training tokens/s of each attention variant on the default\n"
    "                                                   preset's shape, and its ratio to softmax (measured first and last)\n"
    "       attnlab-bench --decoding [--passes N] [--budget N] [--policy NAME]\n"
    "                                                   cached decoding of the default model, full cache and each\n"
    "                                                   eviction policy at the budget (default 64): one JSON line each,\n"
    "                                                   and the weight-streaming bound of a single stream;\n"
    "                                                   --policy: that one alone (to profile it)\n"
    "       attnlab-bench --hf FOLDER [--threads N] [--prefill N] [--decode N (0: prefill alone)] [--passes N]\n"
    "                                                   workload gpt2: prefill ms, cached decoding tokens/s and peak\n"
    "                                                   memory of a Hugging Face folder (bench/hf_gpt2_peer.py --write)\n"
    "       attnlab-bench --interpret [--threads N] [--passes N] [--gpt2 1]\n"
    "                                                   the causal toolkit: hooks free when none is set, a residual\n"
    "                                                   patching sweep of the induction model, and (--gpt2 1) per-head\n"
    "                                                   patching of a GPT-2-small-shaped model: one JSON line each\n"
    "       attnlab-bench --peak [--threads N]         this machine's float32 FMA peak per core (GFLOP/s), with N\n"
    "                                                   threads running at once\n"
    "       attnlab-bench --gemm                       the hot matrix products at the workloads' shapes: GFLOP/s of\n"
    "                                                   CPU time with Eigen and with each micro-kernel, one thread\n"
    "       attnlab-bench --summarize FILE             results of both sides (JSON lines) as a Markdown table\n"
    "       --stock-heap (with any of the above)       leave glibc's heap settings as they are (the programs keep\n"
    "                                                   freed blocks for reuse: core/heap_reuse.h)\n";

[[noreturn]] void fail(const std::string& why) {
  std::cerr << "attnlab-bench: " << why << "\n";
  std::exit(2);
}

int integerArg(const char* text, const char* flag, int min, int max) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (!*text || *end || v < min || v > max)
    fail(std::string(flag) + " takes an integer from " + std::to_string(min) + " to " + std::to_string(max));
  return static_cast<int>(v);
}

nlohmann::json spreadJson(const attnlab::Spread& s) { return {{"median", s.median}, {"min", s.min}, {"max", s.max}}; }

}  // namespace

int main(int argc, char** argv) {
  using namespace attnlab;
  restartWithPassiveOpenMpWait(argv);  // as the app and the CLI run (run.sh sets it for both sides anyway)
  std::string mode, value, policy;
  std::vector<std::string> sets;  // --set KEY=VALUE, applied after the workload's own overrides
  bool gpt2 = false;
  bool stockHeap = false;  // --stock-heap: glibc's own settings, to measure what the reuse gives
  int threads = 1, steps = 10, warmup = 2, traces = 20, passes = 20, budget = 64, prefill = 512, decode = 128;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--stock-heap") {
      stockHeap = true;
      continue;
    }
    if (a == "--list" || a == "--decoding" || a == "--interpret" || a == "--peak" || a == "--gemm") {
      mode = a;
      continue;
    }
    if (i + 1 >= argc) fail("unknown or incomplete argument '" + a + "'\n" + kUsage);
    const char* next = argv[++i];
    if (a == "--describe" || a == "--workload" || a == "--summarize" || a == "--hf" || a == "--variants") {
      mode = a;
      value = next;
    } else if (a == "--threads") threads = integerArg(next, "--threads", 1, 64);
    else if (a == "--steps") steps = integerArg(next, "--steps", 1, 100000);
    else if (a == "--warmup") warmup = integerArg(next, "--warmup", 0, 1000);
    else if (a == "--traces") traces = integerArg(next, "--traces", 0, 100000);
    else if (a == "--passes") passes = integerArg(next, "--passes", 1, 100000);
    else if (a == "--policy") policy = next;
    else if (a == "--set") sets.push_back(next);
    else if (a == "--gpt2") gpt2 = integerArg(next, "--gpt2", 0, 1) == 1;
    else if (a == "--budget") budget = integerArg(next, "--budget", 1, 100000);
    else if (a == "--prefill") prefill = integerArg(next, "--prefill", 1, 1 << 20);
    else if (a == "--decode") decode = integerArg(next, "--decode", 0, 1 << 20);
    else fail("unknown argument '" + a + "'\n" + kUsage);
  }
  if (mode.empty()) fail(std::string("nothing to do\n") + kUsage);
  if (!stockHeap) keepFreedBlocksForReuse();  // as attnlab and attnlab-cli run

  if (mode == "--list") {
    for (const bench::Workload& w : bench::workloads()) std::cout << w.name << "\t" << w.what << "\n";
    return 0;
  }
  if (mode == "--peak") {
    const bench::Peak peak = bench::measurePeak(threads);
    std::cout << nlohmann::json{{"peak_gflops_per_core", peak.gflops_per_core}, {"isa", peak.isa}, {"threads", threads}}.dump()
              << std::endl;
    return 0;
  }
  if (mode == "--gemm") {
    for (const nlohmann::json& line : bench::timeGemmProducts(0.6)) std::cout << line.dump() << std::endl;
    return 0;
  }
  if (mode == "--decoding") {
    try {
      for (const nlohmann::json& line : bench::timeDecoding(passes, budget, policy)) std::cout << line.dump() << std::endl;
    } catch (const std::exception& e) {
      fail(e.what());
    }
    return 0;
  }
  if (mode == "--variants") {
    try {
      for (const nlohmann::json& line : bench::timeVariants(value, threads, warmup, steps)) std::cout << line.dump() << std::endl;
    } catch (const std::exception& e) {
      fail(e.what());
    }
    return 0;
  }
  if (mode == "--interpret") {
    try {
      for (const nlohmann::json& line : bench::timeInterpret(threads, passes, gpt2)) std::cout << line.dump() << std::endl;
    } catch (const std::exception& e) {
      fail(e.what());
    }
    return 0;
  }
  if (mode == "--hf") {
    try {
      std::cout << bench::timeHfModel(value, threads, prefill, decode, passes).dump() << std::endl;
    } catch (const std::exception& e) {
      fail(e.what());
    }
    return 0;
  }
  if (mode == "--summarize") {
    std::ifstream in(value);
    if (!in) fail("cannot read " + value + ": " + std::strerror(errno));
    if (std::string why = bench::summarize(in, std::cout); !why.empty()) fail(value + ": " + why);
    return 0;
  }

  ExperimentConfig config;
  if (std::string why = bench::workloadConfig(value, config); !why.empty()) fail(why);
  for (const std::string& assignment : sets)
    if (std::string why = applyOverride(config, assignment); !why.empty()) fail("--set " + assignment + ": " + why);
  if (std::string why = validate(config); !why.empty()) fail(why);
  config.train.threads = threads;
  prepareForTiming(config, warmup, steps);
  Trainer trainer(config);
  const int seqLen = static_cast<int>(trainer.probeTokens().size());
  if (mode == "--describe") {
    std::cout << bench::describe(value, trainer.config(), seqLen).dump() << std::endl;
    return 0;
  }
  const bench::Peak peak = bench::measurePeak(threads);
  const StepTimes times = timeTrainingSteps(trainer, warmup, steps);
  nlohmann::json result = {{"side", "attnlab"},          {"workload", value}, {"threads", threads},
                           {"steps", steps},             {"seq_len", seqLen}, {"tokens_per_second", spreadJson(spreadOf(times.tokens_per_second))},
                           {"tokens_per_cpu_second", spreadJson(spreadOf(times.tokens_per_cpu_second))},
                           {"peak_rss_mb", peakResidentBytes() / 1048576.0},
                           {"model_flops_per_token", bench::trainingFlopsPerToken(trainer.config().model, seqLen)},
                           {"peak_gflops_per_core", peak.gflops_per_core}, {"isa", peak.isa}};
  if (traces > 0) {
    const TraceTimes t = timeProbeTraces(trainer, traces);
    result["trace_ms"] = spreadJson(spreadOf(t.ms));
    result["trace_cpu_ms"] = spreadJson(spreadOf(t.cpu_ms));
  }
  std::cout << result.dump() << std::endl;
  return 0;
}
