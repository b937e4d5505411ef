#pragma once
// The soft-to-hard eviction paper's 2x2x2 study at toy scale: {softmax, sigmoid} x {learned retention
// gate, none} x {RoPE, ALiBi} trained on the toy language, then evaluated on the same held-out
// sequences through the KV cache:
//   dense       every entry kept (the model's own no-eviction reference);
//   hard        the learned gate applied hard (threshold), gated models only;
//   matched     H2O, KeyDiff, window and SnapKV given, at every step, layer and KV head, exactly as many
//               entries as the gated model of the same attention, encoding and seed kept;
//   sweep       PPL vs cache budget (a share of the positions seen) for a list of policies.
// Plain data in, plain data out: the CLI writes the report.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace attnlab {

// The defaults are the full study (attnlab-cli study live-cache): the largest that fits in about half
// an hour on 2 idle cores (README, "KV cache, eviction and the live-cache study").
struct LiveCacheStudySettings {
  int d_model = 64, n_layers = 4, n_heads = 4, d_ff = 256, context = 64;
  int steps = 2000, batch = 16;
  double lr = 3e-3;
  double sparsity = 0.5;   // model.retention_sparsity of the gated models
  double threshold = 0.5;  // hard eviction: entries with g below it leave the cache
  std::vector<uint64_t> seeds = {1, 2, 3};
  int eval_sequences = 24;
  std::vector<double> budget_ratios = {0.125, 0.25, 0.5, 0.75};
  std::vector<std::string> sweep_policies = {"window", "streaming_llm", "h2o", "tova", "keydiff", "snapkv", "random", "learned_gate"};
  std::vector<std::string> matched_policies = {"h2o", "keydiff", "window", "snapkv"};
  int threads = 2;
};

struct LiveCacheStudyRow {
  std::string attention, positional;
  bool gated = false;
  uint64_t seed = 0;
  double train_loss = 0;   // last training step's loss (incl. the sparsity term for gated models)
  double dense_ppl = 0;
  double hard_ppl = 0;     // NaN without a gate
  double live_share = 1;   // of the hard-eviction run (of the gated twin for ungated models)
  std::vector<double> matched_ppl;  // per matched policy
  double seconds = 0;      // training and evaluation time of this model
  std::string label() const;  // "softmax+gate/rope"
};

struct LiveCacheSweepPoint {
  std::string model;  // row label
  uint64_t seed = 0;
  std::string policy;
  double budget_ratio = 0;
  double ppl = 0;
  double live_share = 0;
};

struct LiveCacheStudyResult {
  LiveCacheStudySettings settings;
  std::vector<LiveCacheStudyRow> rows;
  std::vector<LiveCacheSweepPoint> sweep;
  double seconds = 0;
};

// Returns "" or a one-line reason why the settings cannot run.
std::string validateStudy(const LiveCacheStudySettings& settings);
// Throws std::invalid_argument on bad settings; `progress` gets one line per finished stage.
LiveCacheStudyResult runLiveCacheStudy(const LiveCacheStudySettings& settings,
                                       const std::function<void(const std::string&)>& progress);

}  // namespace attnlab
