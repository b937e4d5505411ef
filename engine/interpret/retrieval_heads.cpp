#include "interpret/retrieval_heads.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <sstream>
#include <stdexcept>

#include "attention/softmax_core.h"
#include "core/random.h"
#include "interpret/interpretation.h"
#include "model/attention_layer.h"
#include "model/workspace.h"

namespace attnlab {
namespace {

void forwardBatch(const Model& model, const Batch& batch, ForwardHooks* hooks, Workspace& ws) {
  ws.hooks = hooks;
  model.forward(ws, batch.inputs.data(), batch.targets.data(), batch.B, batch.T);
}

bool inHeads(const HeadList& heads, int layer, int head) { return std::find(heads.begin(), heads.end(), std::make_pair(layer, head)) != heads.end(); }

}  // namespace

std::vector<std::vector<double>> retrievalScores(const Model& model, const std::vector<Batch>& sequences) {
  const ModelConfig& c = model.config();
  std::vector<std::vector<double>> hits(c.n_layers, std::vector<double>(c.n_heads, 0.0));
  int answers = 0;
  auto ws = makeWorkspace();
  for (const Batch& batch : sequences) {
    forwardBatch(model, batch, nullptr, *ws);
    const int T = batch.T;
    for (int b = 0; b < batch.B; ++b) {
      const int* tokens = batch.inputs.data() + b * T;
      const int* targets = batch.targets.data() + b * T;
      const int firstAnswer = static_cast<int>(std::find_if(targets, targets + T, [](int t) { return t >= 0; }) - targets);
      for (int t = firstAnswer; t < T; ++t) {
        if (targets[t] < 0) continue;
        ++answers;
        for (int l = 0; l < c.n_layers; ++l)
          for (int h = 0; h < c.n_heads; ++h) {
            const float* row = ws->blocks[l].attn.weights.data() + ((static_cast<size_t>(b) * c.n_heads + h) * T + t) * T;
            const int topKey = static_cast<int>(std::max_element(row, row + t + 1) - row);
            if (topKey <= firstAnswer && tokens[topKey] == targets[t]) hits[l][h] += 1;
          }
      }
    }
  }
  if (answers == 0) throw std::invalid_argument("the sequences hold no answer to retrieve (the task marks none)");
  for (auto& layer : hits)
    for (double& h : layer) h /= answers;
  return hits;
}

double answerAccuracy(const Model& model, const std::vector<Batch>& sequences, ForwardHooks* hooks) {
  auto ws = makeWorkspace();
  long right = 0, total = 0;
  for (const Batch& batch : sequences) {
    forwardBatch(model, batch, hooks, *ws);
    for (int i = 0; i < batch.B * batch.T; ++i) {
      if (batch.targets[i] < 0) continue;
      Eigen::Index best;
      ws->logits.row(i).maxCoeff(&best);
      right += best == batch.targets[i];
      ++total;
    }
  }
  return total ? static_cast<double>(right) / total : std::numeric_limits<double>::quiet_NaN();
}

EditHook headKnockout(HeadList heads) {
  return EditHook([heads](HookSite s, int layer) { return s == HookSite::attn_head_out && std::any_of(heads.begin(), heads.end(), [&](auto& p) { return p.first == layer; }); },
                  [heads](const Activation& a) {
                    for (int h = 0; h < a.heads; ++h)
                      if (inHeads(heads, a.layer, h))
                        for (int b = 0; b < a.B; ++b)
                          for (int t = 0; t < a.T; ++t) std::fill_n(a.row(b, h, t), a.width, 0.0f);
                  });
}

EditHook ropePairKnockout(const Model& model, HeadList heads, int k) {
  const ModelConfig& c = model.config();
  const int pairs = c.n_layers ? model.attentionLayer(0).positional().rotaryPairs() : 0;
  if (k < 0 || k > pairs) throw std::invalid_argument("cannot zero " + std::to_string(k) + " RoPE pairs: the heads rotate " + std::to_string(pairs));
  const int group = c.n_heads / c.kvHeads();
  // A key head is zeroed when any query head it serves is chosen (under GQA the pair is shared).
  return EditHook(
      [k](HookSite s, int) { return k > 0 && (s == HookSite::attn_q || s == HookSite::attn_k); },
      [heads, k, pairs, group](const Activation& a) {
        for (int h = 0; h < a.heads; ++h) {
          bool chosen = false;
          for (int g = 0; g < (a.site == HookSite::attn_k ? group : 1); ++g)
            chosen |= inHeads(heads, a.layer, a.site == HookSite::attn_k ? h * group + g : h);
          if (!chosen) continue;
          for (int b = 0; b < a.B; ++b)
            for (int t = 0; t < a.T; ++t) std::fill_n(a.row(b, h, t) + 2 * (pairs - k), 2 * k, 0.0f);
        }
      });
}

RopePhaseSwitch::RopePhaseSwitch(const Model& model, bool keepPhase) : model_(model), keepPhase_(keepPhase) {
  const ModelConfig& c = model.config();
  if (c.positional != "rope") throw std::invalid_argument("the Im -> 0 switch needs RoPE positions (the model uses " + c.positional + ")");
  for (int l = 0; l < c.n_layers; ++l) {
    const std::string& v = model.attentionLayer(l).variantName();
    if (v != "softmax" && v != "window")
      throw std::invalid_argument("the Im -> 0 switch needs softmax attention (layer " + std::to_string(l) + " is " + v + ")");
  }
  beta_ = static_cast<float>(settingOr(c.attention_settings, temperatureSetting()));
  Hkv_ = c.kvHeads();
}

bool RopePhaseSwitch::wants(HookSite s, int) const { return s == HookSite::attn_q || s == HookSite::attn_k || s == HookSite::attn_pattern; }

void RopePhaseSwitch::at(const Activation& a) {
  if (a.site != HookSite::attn_pattern) {
    (a.site == HookSite::attn_q ? q_ : k_).assign(a.data, a.data + a.size());
    return;
  }
  const AttentionLayer& layer = model_.attentionLayer(a.layer);
  const int T = a.T, H = a.heads, pairs = layer.positional().rotaryPairs();
  const int dHead = static_cast<int>(q_.size() / (static_cast<size_t>(a.B) * H * T));
  std::vector<int> pos(T);
  std::iota(pos.begin(), pos.end(), 0);
  Mat angles;
  layer.positional().rotaryAngles(a.layer, Mat(), pos.data(), 1, T, angles);
  const float scale = beta_ / std::sqrt(static_cast<float>(dHead));
  std::vector<double> row(T);
  for (int b = 0; b < a.B; ++b)
    for (int h = 0; h < H; ++h) {
      const float* q = q_.data() + (static_cast<size_t>(b) * H + h) * T * dHead;
      const float* k = k_.data() + (static_cast<size_t>(b) * Hkv_ + h / (H / Hkv_)) * T * dHead;
      for (int i = 0; i < T; ++i) {
        float* w = a.row(b, h, i);
        double total = 0;
        for (int j = 0; j < T; ++j) {
          if (w[j] == 0) continue;  // masked (or underflowed): stays zero
          // With w = q_rot conj k_rot = z e^{i d}, the pair's score Re(w) = a cos d - b sin d; the
          // switch removes -b sin d, i.e. the score moves by cos d Re(w e^{-i d}) - Re(w).
          double removed = 0;
          for (int m = 0; m < pairs; ++m) {
            const double q0 = q[i * dHead + 2 * m], q1 = q[i * dHead + 2 * m + 1];
            const double k0 = k[j * dHead + 2 * m], k1 = k[j * dHead + 2 * m + 1];
            const double re = q0 * k0 + q1 * k1, im = q1 * k0 - q0 * k1;
            const double d = static_cast<double>(angles(i, m)) - angles(j, m);
            const double zRe = re * std::cos(d) + im * std::sin(d);  // Re(w e^{-i d})
            removed += re - zRe * std::cos(d);
          }
          row[j] = keepPhase_ ? w[j] : w[j] * std::exp(-scale * removed);
          total += row[j];
        }
        for (int j = 0; j < T; ++j)
          if (w[j] != 0) w[j] = static_cast<float>(row[j] / total);
      }
    }
}

RetrievalStudy retrievalStudy(const Model& model, const std::vector<Batch>& sequences, int k, uint64_t seed,
                              const std::function<bool(int, int)>& progress) {
  const ModelConfig& c = model.config();
  const int heads = c.n_layers * c.n_heads;
  if (k < 0 || k > heads) throw std::invalid_argument("k = " + std::to_string(k) + " heads to mask, but the model has " + std::to_string(heads));
  constexpr int kDraws = 5, kPasses = 5 + kDraws;  // scores, plain, top masked, the draws, RoPE pairs, phase
  int done = 0;
  auto goOn = [&] { return !progress || progress(++done, kPasses); };
  RetrievalStudy study;
  study.accuracy_rope_knockout = study.accuracy_phase_off = std::numeric_limits<double>::quiet_NaN();
  study.scores = retrievalScores(model, sequences);
  HeadList all;
  for (int l = 0; l < c.n_layers; ++l)
    for (int h = 0; h < c.n_heads; ++h) all.push_back({l, h});
  std::stable_sort(all.begin(), all.end(), [&](auto& x, auto& y) { return study.scores[x.first][x.second] > study.scores[y.first][y.second]; });
  study.top.assign(all.begin(), all.begin() + k);
  if (!goOn()) return study;
  study.accuracy = answerAccuracy(model, sequences, nullptr);
  if (!goOn()) return study;
  EditHook top = headKnockout(study.top);
  study.accuracy_top_masked = answerAccuracy(model, sequences, &top);
  if (!goOn()) return study;
  Rng rng(seed);
  for (int d = 0; d < kDraws; ++d) {
    HeadList pool = all;
    for (int i = 0; i < k; ++i) std::swap(pool[i], pool[rng.uniformInt(i, heads - 1)]);
    EditHook random = headKnockout(HeadList(pool.begin(), pool.begin() + k));
    study.accuracy_random_masked += answerAccuracy(model, sequences, &random) / kDraws;
    if (!goOn()) return study;
  }
  const int pairs = model.attentionLayer(0).positional().rotaryPairs();
  if (pairs > 0) {
    EditHook knockout = ropePairKnockout(model, study.top, std::min(k, pairs));
    study.accuracy_rope_knockout = answerAccuracy(model, sequences, &knockout);
  }
  if (!goOn()) return study;
  try {
    RopePhaseSwitch phaseOff(model);
    study.accuracy_phase_off = answerAccuracy(model, sequences, &phaseOff);
  } catch (const std::invalid_argument&) {  // not a RoPE softmax model: the switch does not apply
  }
  goOn();
  return study;
}

namespace {

class RetrievalInterpretation : public Interpretation {
 public:
  Json run(const Model& model, const InterpretRequest& r) const override {
    const RetrievalStudy s = retrievalStudy(model, r.sequences, r.top_k, r.seed, r.progress);
    Json rows = Json::array();
    for (size_t l = 0; l < s.scores.size(); ++l)
      for (size_t h = 0; h < s.scores[l].size(); ++h) rows.push_back({{"layer", l}, {"head", h}, {"value", s.scores[l][h]}});
    Json top = Json::array();
    for (auto [l, h] : s.top) top.push_back({{"layer", l}, {"head", h}});
    auto number = [](double v) { return std::isnan(v) ? Json(nullptr) : Json(v); };
    return {{"k", r.top_k},
            {"top_heads", std::move(top)},
            {"accuracy", number(s.accuracy)},
            {"accuracy_top_masked", number(s.accuracy_top_masked)},
            {"accuracy_random_masked", number(s.accuracy_random_masked)},
            {"accuracy_rope_knockout", number(s.accuracy_rope_knockout)},
            {"accuracy_phase_off", number(s.accuracy_phase_off)},
            {"results", std::move(rows)}};
  }
  std::string describe(const Json& j) const override {
    std::ostringstream out;
    auto show = [](const Json& v) { return v.is_null() ? std::string("n/a") : std::to_string(v.get<double>()); };
    out << "answer accuracy " << show(j["accuracy"]) << "; top " << j["k"].get<int>() << " retrieval heads masked "
        << show(j["accuracy_top_masked"]) << ", random heads masked " << show(j["accuracy_random_masked"]) << "\n"
        << "lowest-frequency RoPE pairs zeroed in the top heads " << show(j["accuracy_rope_knockout"]) << ", Im -> 0 everywhere "
        << show(j["accuracy_phase_off"]) << "\ntop heads:";
    for (const Json& h : j["top_heads"]) out << " L" << h["layer"].get<int>() << "H" << h["head"].get<int>();
    return out.str() + "\n";
  }
  std::string inputs() const override { return "[--k K] [--batches N] [--length T] [--seed S] (the task's sequences; passkey prompts on a Hugging Face folder)"; }
};

ATTNLAB_REGISTER(InterpretationRegistry, "retrieval",
                 "retrieval heads: share of answers whose top key is the needle; top-k vs random knockouts, RoPE pair and phase switches",
                 [] { return std::make_unique<RetrievalInterpretation>(); });

}  // namespace
}  // namespace attnlab
