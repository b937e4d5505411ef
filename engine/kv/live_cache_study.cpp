#include "kv/live_cache_study.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

#include "kv/live_cache_eval.h"
#include "train/trainer.h"

namespace attnlab {

std::string LiveCacheStudyRow::label() const { return attention + (gated ? "+gate" : "") + "/" + positional; }

std::string validateStudy(const LiveCacheStudySettings& s) {
  if (s.seeds.empty()) return "the study needs at least one seed";
  if (s.eval_sequences < 1 || s.eval_sequences > 100000) return "eval sequences must be in [1, 100000]";
  if (!(s.threshold >= 0 && s.threshold <= 1)) return "the hard-eviction threshold must be in [0, 1]";
  for (double r : s.budget_ratios)
    if (!(r > 0 && r <= 1)) return "every sweep budget must be a share in (0%, 100%]";
  for (const auto& p : s.sweep_policies)
    if (!EvictionPolicyRegistry::instance().find(p) || isDenseReferencePolicy(p))
      return "sweep policy '" + p + "' is not an eviction policy with a budget (known: " + EvictionPolicyRegistry::instance().names() + ")";
  ExperimentConfig probe;
  probe.model.d_model = s.d_model;
  probe.model.n_layers = s.n_layers;
  probe.model.n_heads = s.n_heads;
  probe.model.d_ff = s.d_ff;
  probe.model.context = s.context;
  probe.model.positional = "rope";
  probe.model.retention_gate = true;
  probe.model.retention_sparsity = s.sparsity;
  probe.train.steps = s.steps;
  probe.train.batch = s.batch;
  probe.train.lr = s.lr;
  probe.train.threads = s.threads;
  return validate(probe);
}

namespace {

using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

ExperimentConfig experimentOf(const LiveCacheStudySettings& s, const std::string& attention, const std::string& positional,
                              bool gated, uint64_t seed) {
  ExperimentConfig e;
  e.name = "live-cache " + attention + (gated ? "+gate" : "") + "/" + positional;
  e.model.d_model = s.d_model;
  e.model.n_layers = s.n_layers;
  e.model.n_heads = s.n_heads;
  e.model.d_ff = s.d_ff;
  e.model.context = s.context;
  e.model.attention = {attention};
  e.model.positional = positional;
  e.model.retention_gate = gated;
  e.model.retention_sparsity = gated ? s.sparsity : 0.0;
  e.task.name = "toy_language";
  e.train.steps = s.steps;
  e.train.batch = s.batch;
  e.train.lr = s.lr;
  e.train.warmup = std::min(50, s.steps / 10);
  e.train.seed = seed;
  e.train.threads = s.threads;
  e.train.eval_every = 0;
  return e;
}

}  // namespace

LiveCacheStudyResult runLiveCacheStudy(const LiveCacheStudySettings& s, const std::function<void(const std::string&)>& progress) {
  if (auto why = validateStudy(s); !why.empty()) throw std::invalid_argument(why);
  const auto start = Clock::now();
  LiveCacheStudyResult result;
  result.settings = s;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (uint64_t seed : s.seeds)
    for (const char* attention : {"softmax", "sigmoid"})
      for (const char* positional : {"rope", "alibi"}) {
        std::vector<int> gatedCounts;  // the gated twin's live counts, which its ungated twin is matched to
        double gatedShare = 1;
        for (bool gated : {true, false}) {
          const auto modelStart = Clock::now();
          Trainer trainer(experimentOf(s, attention, positional, gated, seed));
          double lastLoss = 0;
          for (int step = 0; step < s.steps; ++step) lastLoss = trainer.trainStep().loss;
          const Model& model = trainer.model();
          // the same held-out text for every model: the stream depends on the seed only
          const Batch text = heldOutSequences(trainer.task(), s.eval_sequences, s.context, seed);
          LiveCacheStudyRow row;
          row.attention = attention;
          row.positional = positional;
          row.gated = gated;
          row.seed = seed;
          row.train_loss = lastLoss;
          row.dense_ppl = evaluateLiveCache(model, text, {}).perplexity;
          row.hard_ppl = nan;
          if (gated) {
            LiveCacheSetup hard;
            hard.policy = "learned_gate";
            hard.settings["threshold"] = s.threshold;
            const LiveCacheResult r = evaluateLiveCache(model, text, hard);
            row.hard_ppl = r.perplexity;
            gatedCounts = r.liveCounts;
            gatedShare = r.liveShare;
          }
          row.live_share = gatedShare;
          for (const auto& policy : s.matched_policies) {
            LiveCacheSetup post;
            post.policy = policy;
            row.matched_ppl.push_back(evaluateLiveCache(model, text, post, &gatedCounts).perplexity);
          }
          for (const auto& policy : s.sweep_policies) {
            if (policy == "learned_gate" && !gated) continue;
            for (double ratio : s.budget_ratios) {
              LiveCacheSetup setup;
              setup.policy = policy;
              setup.budget.kind = Budget::Kind::ratio;
              setup.budget.value = ratio;
              const LiveCacheResult r = evaluateLiveCache(model, text, setup);
              result.sweep.push_back({row.label(), seed, policy, ratio, r.perplexity, r.liveShare});
            }
          }
          row.seconds = secondsSince(modelStart);
          result.rows.push_back(row);
          if (progress) {
            char line[200];
            std::snprintf(line, sizeof(line), "%s seed %llu: dense PPL %.3f", row.label().c_str(), static_cast<unsigned long long>(seed),
                          row.dense_ppl);
            std::string text = line;
            if (gated) {
              std::snprintf(line, sizeof(line), ", hard eviction %.3f at %.1f%% live", row.hard_ppl, 100 * row.live_share);
              text += line;
            }
            progress(text + " (" + std::to_string(static_cast<int>(row.seconds)) + " s)");
          }
        }
      }
  result.seconds = secondsSince(start);
  return result;
}

}  // namespace attnlab
