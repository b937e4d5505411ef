#include "decoding.h"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>

#include "kv/decoder.h"
#include "train/benchmark.h"
#include "workloads.h"

namespace attnlab::bench {
namespace {

double processCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// One decoder and the figures of its passes.
struct Case {
  std::string policy, model;
  std::unique_ptr<Decoder> decoder;
  Budget budget;
  std::vector<double> tokensPerSecond, tokensPerCpuSecond;
};

std::unique_ptr<Trainer> defaultTrainer(bool retentionGate) {
  ExperimentConfig config;
  if (std::string why = workloadConfig("default", config); !why.empty()) throw std::runtime_error(why);
  config.model.retention_gate = retentionGate;
  return std::make_unique<Trainer>(config);
}

// Bytes of parameters one decoding step reads in full: every block, the final norm and the
// unembedding (the token table when tied). The token and position tables give one row each, left out.
double streamedWeightBytes(const Model& model) {
  double bytes = 0;
  for (const auto& p : model.params().all()) {
    const bool table = p->name == "tok_emb.weight" ? !model.config().tied_embeddings : p->name.rfind("pos_emb", 0) == 0;
    if (!table) bytes += 4.0 * static_cast<double>(p->value.size());
  }
  return bytes;
}

// The fastest a single stream can decode when every step must read `bytes` of weights: the best
// of several trials of one vector-matrix product x W^T over a [bytes / 4 / d_model, d_model]
// weight (stored [out, in] as the model's are, so the same row-major product decoding runs, with
// nothing else around it), on this thread, as tokens per second.
double weightStreamingBound(double bytes, int dModel) {
  const Eigen::Index rows = static_cast<Eigen::Index>(bytes / 4.0 / dModel);
  const Mat weights = Mat::Constant(rows, dModel, 0.01f);  // the values do not matter, the bytes do
  Eigen::RowVectorXf x = Eigen::RowVectorXf::Constant(dModel, 1.0f), y(rows);
  double best = 0;
  for (int trial = 0; trial < 7; ++trial) {
    constexpr int kReps = 50;
    const auto start = std::chrono::steady_clock::now();
    for (int r = 0; r < kReps; ++r) {
      y.noalias() = x * weights.transpose();
      x[0] += 1e-9f * y[0];  // each product depends on the previous one, as decoding's steps do
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::max(best, kReps / seconds);
  }
  return best;
}

}  // namespace

std::vector<nlohmann::json> timeDecoding(int passes, int budget, const std::string& only) {
  const std::unique_ptr<Trainer> plain = defaultTrainer(false), gated = defaultTrainer(true);
  const std::vector<int> tokens = plain->probeTokens();
  Budget limited;
  limited.kind = Budget::Kind::count;
  limited.value = budget;

  std::vector<Case> cases;
  auto add = [&](const std::string& policy, const Trainer& trainer, const std::string& model) {
    if (!only.empty() && policy != only) return;
    const Budget b = policy == "full" ? Budget{} : limited;
    Case c{policy, model, nullptr, b, {}, {}};
    c.decoder = std::make_unique<Decoder>(trainer.model(), makeEvictionPolicy(policy, {}, trainer.config().model), policy, b);
    cases.push_back(std::move(c));
  };
  if (!only.empty() && !EvictionPolicyRegistry::instance().find(only))
    throw std::invalid_argument("unknown eviction policy '" + only + "' (known: " + EvictionPolicyRegistry::instance().names() + ")");
  add("full", *plain, "default");
  for (const auto& entry : EvictionPolicyRegistry::instance().entries())
    if (entry.name != "full" && entry.name != "learned_gate") add(entry.name, *plain, "default");
  if (only.empty()) add("full", *gated, "retention_gate");
  add("learned_gate", *gated, "retention_gate");

  for (int pass = -1; pass < passes; ++pass)  // pass -1 warms the caches and sizes the buffers
    for (Case& c : cases) {
      const double cpuStart = processCpuSeconds();
      const auto start = std::chrono::steady_clock::now();
      c.decoder->reset();
      for (int token : tokens) c.decoder->step(token);
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      const double cpu = processCpuSeconds() - cpuStart;
      if (pass < 0) continue;
      c.tokensPerSecond.push_back(tokens.size() / seconds);
      c.tokensPerCpuSecond.push_back(cpu > 0 ? tokens.size() / cpu : 0.0);
    }

  std::vector<nlohmann::json> lines;
  auto spread = [](const std::vector<double>& v) {
    const Spread s = spreadOf(v);
    return nlohmann::json{{"median", s.median}, {"min", s.min}, {"max", s.max}};
  };
  for (const Case& c : cases)
    lines.push_back({{"side", "attnlab"},
                     {"kind", "decoding"},
                     {"policy", c.policy},
                     {"budget", c.budget.describe()},
                     {"model", c.model},
                     {"tokens", tokens.size()},
                     {"passes", passes},
                     {"tokens_per_second", spread(c.tokensPerSecond)},
                     {"tokens_per_cpu_second", spread(c.tokensPerCpuSecond)}});
  const Model& model = plain->model();
  const double bytes = streamedWeightBytes(model);
  lines.push_back({{"side", "attnlab"},
                   {"kind", "decoding_bound"},
                   {"model", "default"},
                   {"weight_bytes_per_token", bytes},
                   {"bound_tokens_per_second", weightStreamingBound(bytes, model.config().d_model)}});
  return lines;
}

}  // namespace attnlab::bench
