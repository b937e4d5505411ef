#include "kv/occupancy_record.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "kv/decoder.h"

namespace attnlab {

namespace {

CellState liveState(KeptAs why) {
  switch (why) {
    case KeptAs::sink: return CellState::Sink;
    case KeptAs::recent: return CellState::KeptRecent;
    case KeptAs::gate: return CellState::KeptByGate;
    case KeptAs::score: break;
  }
  return CellState::Live;
}

double nextTokenLoss(const Mat& logits, int target) {
  const float top = logits.maxCoeff();
  double sum = 0;
  for (Eigen::Index v = 0; v < logits.cols(); ++v) sum += std::exp(static_cast<double>(logits(0, v) - top));
  return std::log(sum) - (logits(0, target) - top);
}

// Writes row `step` of every head's raster from the decoder's record after that step.
void recordStep(const Decoder& decoder, const OccupancyRecord& shape, int step, OccupancyRun& run) {
  const StepRecord& r = decoder.record();
  for (const HeadOccupancy& h : r.heads) {
    HeadRaster& raster = run.heads[static_cast<size_t>(h.layer) * shape.kvHeads + h.kvHead];
    CellState* row = raster.cells.data() + shape.cell(step, 0);
    for (int p = 0; p <= step; ++p) row[p] = CellState::EvictedEarlier;
    for (const Eviction& e : h.evicted) {
      auto at = std::find(run.rules.begin(), run.rules.end(), e.rule);
      if (at == run.rules.end()) at = run.rules.insert(run.rules.end(), e.rule);
      row[e.position] = CellState::EvictedNow;
      raster.rule[shape.cell(step, e.position)] = static_cast<uint8_t>(at - run.rules.begin());
    }
    for (size_t i = 0; i < h.live.size(); ++i) row[h.live[i]] = liveState(h.liveAs[i]);
    if (!raster.gate.empty()) {
      const HeadCache& cache = decoder.cache().head(h.layer, h.kvHead);
      for (int i = 0; i < cache.size(); ++i) raster.gate[shape.cell(step, cache.positions[i])] = cache.gate(i);
    }
    run.headLive[static_cast<size_t>(step) * shape.layers * shape.kvHeads + static_cast<size_t>(h.layer) * shape.kvHeads + h.kvHead] =
        static_cast<int>(h.live.size());
  }
  run.liveEntries[step] = r.liveEntries();
  run.bytes[step] = r.bytes;
  run.stateBytes = r.stateBytes;
}

}  // namespace

std::string OccupancyRun::label() const {
  std::string settings;
  for (const auto& [key, value] : spec.settings) {
    std::ostringstream v;
    v << value;
    settings += (settings.empty() ? " (" : ", ") + key + " " + v.str();
  }
  return spec.policy + (settings.empty() ? "" : settings + ")") + ", " + budget;
}

OccupancyRecord recordOccupancy(const Model& model, const OccupancyRequest& request) {
  const ModelConfig& config = model.config();
  const int P = static_cast<int>(request.prompt.size());
  if (P == 0) throw std::invalid_argument("the prompt is empty: type some tokens or pick the probe or a task example");
  if (request.generate < 0) throw std::invalid_argument("the number of new tokens must not be negative");
  if (P + request.generate > config.context)
    throw std::invalid_argument("the prompt of " + std::to_string(P) + " tokens plus " + std::to_string(request.generate) +
                                " new ones exceeds the model's context of " + std::to_string(config.context));
  for (int t : request.prompt)
    if (t < 0 || t >= config.vocab) throw std::invalid_argument("prompt token id " + std::to_string(t) + " is not in the vocabulary");
  if (request.runs.empty()) throw std::invalid_argument("no eviction policy to run");

  OccupancyRecord out;
  out.steps = P + request.generate;
  out.promptLength = P;
  out.layers = config.n_layers;
  out.kvHeads = config.kvHeads();
  out.group = config.n_heads / out.kvHeads;
  const size_t perStep = static_cast<size_t>(out.layers) * out.kvHeads;
  const size_t cells = static_cast<size_t>(out.steps) * out.steps;

  for (size_t i = 0; i < request.runs.size(); ++i) {
    const OccupancyRunSpec& spec = request.runs[i];
    Budget budget;
    if (!spec.budget.empty())
      if (std::string why = parseBudget(spec.budget, spec.scope, budget); !why.empty()) throw std::invalid_argument(why);
    std::unique_ptr<EvictionPolicy> policy = makeEvictionPolicy(spec.policy, spec.settings, config);
    const bool dense = policy->isDenseReference();
    const bool follow = request.matched && i > 0 && !dense;
    Decoder decoder(model, std::move(policy), spec.policy, follow ? Budget{} : budget, follow);
    if (out.cachesLayer.empty()) {
      out.bytesPerEntry = decoder.cache().bytesPerEntry();
      for (int l = 0; l < out.layers; ++l) out.cachesLayer.push_back(decoder.cachesLayer(l));
    }

    OccupancyRun run;
    run.spec = spec;
    run.matched = follow;
    run.dense = dense;
    run.budget = follow                  ? "matched to " + request.runs[0].policy
                 : spec.budget.empty()   ? (dense ? "keeps all" : "no budget")
                                         : budget.describe();
    run.heads.resize(perStep);
    for (int l = 0; l < out.layers; ++l) {
      if (!out.cachesLayer[l]) continue;
      for (int k = 0; k < out.kvHeads; ++k) {
        HeadRaster& raster = run.heads[static_cast<size_t>(l) * out.kvHeads + k];
        raster.cells.assign(cells, CellState::NotYet);
        raster.rule.assign(cells, 0);
        if (config.retention_gate) raster.gate.assign(cells, std::numeric_limits<float>::quiet_NaN());
      }
    }
    run.liveEntries.assign(out.steps, 0);
    run.headLive.assign(out.steps * perStep, 0);
    run.bytes.assign(out.steps, 0);
    run.loss.assign(out.steps, std::numeric_limits<double>::quiet_NaN());
    run.tokens = request.prompt;

    std::vector<int> exact(perStep);
    const std::vector<int>& reference = out.runs.empty() ? run.headLive : out.runs.front().headLive;
    for (int t = 0; t < out.steps; ++t) {
      if (follow) std::copy_n(reference.data() + t * perStep, perStep, exact.begin());
      const Mat& logits = decoder.step(run.tokens[t], follow ? &exact : nullptr);
      if (t < static_cast<int>(request.targets.size()) && request.targets[t] >= 0 && request.targets[t] < logits.cols())
        run.loss[t] = nextTokenLoss(logits, request.targets[t]);
      if (t + 1 >= P && static_cast<int>(run.tokens.size()) < out.steps)
        run.tokens.push_back(static_cast<int>(std::max_element(logits.data(), logits.data() + logits.cols()) - logits.data()));
      recordStep(decoder, out, t, run);
    }
    out.runs.push_back(std::move(run));
  }
  return out;
}

}  // namespace attnlab
