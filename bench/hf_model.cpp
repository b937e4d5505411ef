#include "hf_model.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <stdexcept>
#include <vector>

#include "hf/hf_model.h"
#include "kv/decoder.h"
#include "model/workspace.h"
#include "train/benchmark.h"

namespace attnlab::bench {

namespace {
double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}
double processCpuSeconds() {  // all threads: the figure a shared machine's load barely moves
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}
}  // namespace

nlohmann::json timeHfModel(const std::string& dir, int threads, int prefill, int decode, int passes) {
  omp_set_num_threads(threads);
  std::unique_ptr<Model> model;
  hf::HfModelInfo info;
  if (std::string why = hf::openHfModel(dir, model, info); !why.empty()) throw std::runtime_error(why);
  const ModelConfig& c = model->config();
  if (prefill + decode > c.context) throw std::runtime_error("prefill + decode exceed the model's context");
  std::vector<int> tokens(prefill + decode);
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<int>((i * 7919) % c.vocab);  // any fixed ids

  auto ws = makeWorkspace();
  ws->inference = true;  // as PyTorch under no_grad: nothing is kept for a backward
  const std::vector<int> noTargets(prefill, -1);
  std::vector<double> prefillMs, prefillCpuMs;
  for (int p = 0; p < passes + 1; ++p) {  // the first pass warms the buffers
    const auto start = std::chrono::steady_clock::now();
    const double cpuStart = processCpuSeconds();
    model->forward(*ws, tokens.data(), noTargets.data(), 1, prefill);
    if (p == 0) continue;
    prefillMs.push_back(1000 * secondsSince(start));
    prefillCpuMs.push_back(1000 * (processCpuSeconds() - cpuStart));
  }
  ws.reset();

  std::vector<double> decodeRates;
  for (int p = 0; p < passes && decode > 0; ++p) {  // --decode 0: prefill alone (to profile it)
    Decoder decoder(*model, makeEvictionPolicy("full", {}, c), "full", Budget{});
    for (int t = 0; t < prefill; ++t) decoder.step(tokens[t]);
    const auto start = std::chrono::steady_clock::now();
    for (int t = prefill; t < prefill + decode; ++t) decoder.step(tokens[t]);
    decodeRates.push_back(decode / secondsSince(start));
  }
  return {{"side", "attnlab"},
          {"workload", "gpt2"},
          {"threads", threads},
          {"prefill_tokens", prefill},
          {"prefill_ms", median(prefillMs)},
          {"prefill_cpu_ms", median(prefillCpuMs)},
          {"decode_tokens", decode},
          {"decode_tokens_per_second", median(decodeRates)},
          {"weights_mb", info.parameters * 4 / 1048576.0},
          {"peak_rss_mb", peakResidentBytes() / 1048576.0}};
}

}  // namespace attnlab::bench
