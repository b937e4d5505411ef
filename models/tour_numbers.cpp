#include "tour_numbers.h"

#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>

#include "analysis/live_head_importance.h"
#include "analysis/map_diagnostics.h"
#include "data/task.h"
#include "kv/eviction_policy.h"
#include "kv/live_cache_eval.h"
#include "analysis/qk_spectrum.h"
#include "core/random.h"
#include "interpret/activation_patching.h"
#include "kv/kv_bytes.h"
#include "positional/length_limit.h"
#include "model/workspace.h"
#include "train/length_eval.h"

namespace attnlab {

namespace {

constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();
// The same probe and samples as the head table (head_table_model.h) and the comparison's metrics,
// so a tour's numbers match what the views show.
constexpr int kDiagnosticsBatch = 8;
constexpr uint64_t kDiagnosticsSeed = 7;
constexpr uint64_t kDropOrderSeed = 11;
constexpr int kCacheSequences = 12;
constexpr int kLengthBatches = 4;
constexpr int kOpenedRepeatLength = 32;  // HeadTableModel::kOpenedRepeatLength  // validation batches per length: the sweep must stay quick at 8x

const std::set<std::string> kDiagnostics = {"induction", "prev_token", "sink", "entropy", "distance",
                                            "best_induction", "best_induction_layer", "best_induction_head",
                                            "best_prev_token", "best_prev_token_layer", "best_prev_token_head",
                                            "best_sink", "best_sink_layer", "best_sink_head", "mean_sink", "uniform_sink"};
const std::set<std::string> kSpectrum = {"qk_radius_over_null", "qk_imaginary_share", "qk_skew_share", "rope_rotational_share"};
const std::set<std::string> kLength = {"length_loss", "length_accuracy", "length_reaches"};
const std::set<std::string> kPatching = {"patch_effect", "best_patch_effect", "best_patch_layer", "best_patch_head",
                                         "patch_clean_diff", "patch_corrupt_diff"};
constexpr uint64_t kCorruptSeed = 13;
const std::set<std::string> kImportance = {"ablation", "intact_loss", "most_important_layer", "most_important_head",
                                           "most_important_ablation", "least_important_ablation", "drop_metric"};

// The model, layer and head a call names; throws when the model lacks them.
struct HeadRef {
  int layer = 0, head = 0;
};
HeadRef headOf(const TourCall& call, const Model& model) {
  const double l = call.numberArg(0), h = call.numberArg(1);
  const int layers = model.config().n_layers, heads = model.config().n_heads;
  if (!(l >= 1 && l <= layers && h >= 1 && h <= heads && l == std::floor(l) && h == std::floor(h)))
    throw std::invalid_argument(call.key() + ": the model has layers 1.." + std::to_string(layers) + " and heads 1.." +
                                std::to_string(heads));
  return {int(l) - 1, int(h) - 1};
}

double diagnostic(const MapDiagnostics& d, const std::string& name) {
  if (name == "induction") return d.induction;
  if (name == "prev_token") return d.previous_token;
  if (name == "sink") return d.sink;
  if (name == "entropy") return d.entropy;
  return d.mean_distance;
}

// The head table's probe: the task's sequences, or for an opened model (no task) the probe's text
// and random repeats [first token, r, r] with |r| as the head table draws them.
std::unique_ptr<MapDiagnosticsProbe> diagnosticsProbe(const RunData& run, const std::vector<int>& probeTokens) {
  if (!run.openedName.empty()) {
    if (probeTokens.empty()) throw std::invalid_argument("head diagnostics need a probe");
    const int repeat = std::min(kOpenedRepeatLength, (run.config.model.context - 1) / 2);
    const Batch probe{1, int(probeTokens.size()), probeTokens, std::vector<int>(probeTokens.size(), -1)};
    return std::make_unique<MapDiagnosticsProbe>(probe, run.config.model.vocab, repeat, kDiagnosticsBatch, kDiagnosticsSeed);
  }
  std::string error;
  const std::unique_ptr<Task> task = makeTask(run.config.task, error);
  if (!task) throw std::invalid_argument("head diagnostics: " + error);
  return std::make_unique<MapDiagnosticsProbe>(*task, run.config.model.vocab, run.sequenceLength, kDiagnosticsBatch, kDiagnosticsSeed);
}

void addDiagnostics(const std::vector<TourCall>& calls, const ModelSnapshot& snapshot, const std::vector<int>& probeTokens,
                    TourNumbers& out) {
  const RunData& run = *snapshot.run;
  const auto heads = diagnosticsProbe(run, probeTokens)->measure(*snapshot.model);
  for (const TourCall& call : calls) {
    if (call.name == "uniform_sink") {  // a head spreading evenly: 1/n on the first of n visible keys, averaged over the rows
      double sum = 0;
      for (int n = 1; n <= run.sequenceLength; ++n) sum += 1.0 / n;
      out["uniform_sink"] = run.sequenceLength ? sum / run.sequenceLength : kUnknown;
    } else if (call.name == "mean_sink") {
      double sum = 0;
      int count = 0;
      for (const auto& layer : heads)
        for (const MapDiagnostics& d : layer) sum += d.sink, ++count;
      out["mean_sink"] = count ? sum / count : kUnknown;
    } else if (call.name.rfind("best_", 0) == 0) {
      const std::string what = call.name.find("induction") != std::string::npos ? "induction"
                               : call.name.find("sink") != std::string::npos    ? "sink"
                                                                                : "prev_token";
      double best = -1;
      int bestLayer = 0, bestHead = 0;
      for (size_t l = 0; l < heads.size(); ++l)
        for (size_t h = 0; h < heads[l].size(); ++h)
          if (diagnostic(heads[l][h], what) > best) {
            best = diagnostic(heads[l][h], what);
            bestLayer = int(l);
            bestHead = int(h);
          }
      const std::string base = "best_" + what;
      out[base] = best;
      out[base + "_layer"] = bestLayer + 1;
      out[base + "_head"] = bestHead + 1;
    } else if (kDiagnostics.count(call.name)) {
      const HeadRef ref = headOf(call, *snapshot.model);
      out[call.key()] = diagnostic(heads[ref.layer][ref.head], call.name);
    }
  }
}

void addImportance(const std::vector<TourCall>& calls, const ModelSnapshot& snapshot, TourNumbers& out) {
  const RunData& run = *snapshot.run;
  std::unique_ptr<Model> model = copyModel(*snapshot.model);
  const LiveHeadImportance report =
      liveHeadImportance(*model, run.evalBatches, run.hasAnswers, snapshot.headGains, kDropOrderSeed);
  out["intact_loss"] = report.shown.loss;
  const HeadImportance* most = nullptr;
  const HeadImportance* least = nullptr;
  for (const HeadImportance& h : report.heads) {
    if (!most || h.ablation > most->ablation) most = &h;
    if (!least || h.ablation < least->ablation) least = &h;
  }
  if (most) {
    out["most_important_layer"] = most->layer + 1;
    out["most_important_head"] = most->head + 1;
    out["most_important_ablation"] = most->ablation;
    out["least_important_ablation"] = least->ablation;
  }
  for (const TourCall& call : calls) {
    if (call.name == "ablation") {
      const HeadRef ref = headOf(call, *snapshot.model);
      for (const HeadImportance& h : report.heads)
        if (h.layer == ref.layer && h.head == ref.head) out[call.key()] = h.ablation;
    } else if (call.name == "drop_metric") {
      const double n = call.numberArg(1);
      for (const HeadDropCurve& curve : report.curves)
        if (curve.order == call.args.at(0))
          for (size_t k = 0; k < curve.count.size(); ++k)  // a curve of many heads has only some counts
            if (curve.count[k] == n) out[call.key()] = curve.metric[k];
      if (!out.count(call.key()))
        throw std::invalid_argument(call.key() + ": needs an order (ascending, descending, random) and 0.." +
                                    std::to_string(report.heads.size()) + " heads removed");
    }
  }
}

void addCache(const TourCall& call, const ModelSnapshot& snapshot, TourNumbers& out) {
  const RunData& run = *snapshot.run;
  if (run.evalBatches.empty()) throw std::invalid_argument(call.key() + ": the run has no validation sample");
  LiveCacheSetup setup;
  setup.policy = call.args.at(0);
  if (!EvictionPolicyRegistry::instance().find(setup.policy)) throw std::invalid_argument(call.key() + ": unknown eviction policy");
  const std::string budget = call.args.at(1);
  if (budget != "0" && budget != "unlimited")
    if (const std::string why = parseBudget(budget, "head", setup.budget); !why.empty())
      throw std::invalid_argument(call.key() + ": " + why);
  const Batch& first = run.evalBatches.front();
  Batch sample;
  sample.B = std::min(kCacheSequences, first.B);
  sample.T = first.T;
  const size_t n = size_t(sample.B) * sample.T;
  sample.inputs.assign(first.inputs.begin(), first.inputs.begin() + n);
  sample.targets.assign(first.targets.begin(), first.targets.begin() + n);
  const LiveCacheResult result = evaluateLiveCache(*snapshot.model, sample, setup);
  const std::string args = "(" + call.args[0] + "," + call.args[1] + ")";
  out["kv_ppl" + args] = result.perplexity;
  out["kv_live_share" + args] = result.liveShare;
}

// The spectrum of a head's W_q^T W_k (analysis/qk_spectrum.h), against the random null of a fresh
// model seeded as the Spectra tab seeds it.
// Activation patching of every head's output on the probe (clean) against the probe with its first
// half redrawn at random (corrupted: the second half no longer repeats anything), as the Circuits
// view runs it: how much of the clean logit difference each head's clean output brings back.
void addPatching(const std::vector<TourCall>& calls, const ModelSnapshot& snapshot, const std::vector<int>& clean, TourNumbers& out) {
  const Model& model = *snapshot.model;
  PatchingRequest request;
  request.clean = clean;
  request.corrupt = corruptedTwin(clean, model.config().vocab);
  request.site = PatchSite::head_out;
  const PatchingResult result = activationPatching(model, request);
  out["patch_clean_diff"] = result.clean_diff;
  out["patch_corrupt_diff"] = result.corrupt_diff;
  const PatchEffect* best = nullptr;
  for (const PatchEffect& row : result.rows) {
    out["patch_effect(" + std::to_string(row.layer + 1) + "," + std::to_string(row.head + 1) + ")"] = row.effect;
    if (!best || row.effect > best->effect) best = &row;
  }
  if (best) {
    out["best_patch_effect"] = best->effect;
    out["best_patch_layer"] = best->layer + 1;
    out["best_patch_head"] = best->head + 1;
  }
  for (const TourCall& call : calls)
    if (call.name == "patch_effect") headOf(call, model);  // a head the model lacks is refused with its reason
}

void addSpectrum(const std::vector<TourCall>& calls, const ModelSnapshot& snapshot, TourNumbers& out) {
  const Model& model = *snapshot.model;
  std::vector<std::pair<int, int>> heads;
  std::vector<const TourCall*> asked;
  for (const TourCall& call : calls)
    if (kSpectrum.count(call.name)) {
      const HeadRef ref = headOf(call, model);
      heads.push_back({ref.layer, ref.head});
      asked.push_back(&call);
    }
  const QkSpectrumReport report = qkSpectra(model.config(), model.params(), heads, snapshot.run->config.train.seed + 1);
  for (size_t i = 0; i < asked.size(); ++i) {
    const QkSpectrum& h = report.heads.at(i);
    const std::string& name = asked[i]->name;
    double v = kUnknown;
    if (name == "qk_radius_over_null" && report.null.circular_radius > 0) v = h.spectral_radius / report.null.circular_radius;
    if (name == "qk_imaginary_share") v = h.imaginary_share;
    if (name == "qk_skew_share") v = h.skew_energy_share;
    if (name == "rope_rotational_share" && !h.rope.empty()) v = h.rope_rotational_share;
    out[asked[i]->key()] = v;
  }
}

// Validation at a multiple of the training length (train/length_eval.h); unknown where the model's
// positions do not reach (a learned table past its context).
void addLength(const TourCall& call, const ModelSnapshot& snapshot, TourNumbers& out) {
  const RunData& run = *snapshot.run;
  const double m = call.numberArg(0);
  if (!(m > 0 && m <= 64)) throw std::invalid_argument(call.key() + ": needs a multiple of the training length in (0, 64]");
  std::string error;
  const std::unique_ptr<Task> task = makeTask(run.config.task, error);
  if (!task) throw std::invalid_argument(call.key() + ": " + error);
  const int length = int(std::lround(m * run.sequenceLength));
  const std::string arg = "(" + call.args[0] + ")";
  out["length_reaches" + arg] = lengthRefusal(snapshot.model->config(), length).empty() ? 1 : 0;
  if (call.name == "length_reaches") return;
  try {
    const EvalResult r = evaluateAtLength(run.config, *task, *snapshot.model, run.sequenceLength, length, kLengthBatches);
    out["length_loss" + arg] = r.loss;
    out["length_accuracy" + arg] = run.hasAnswers ? r.accuracy : kUnknown;
  } catch (const ConfigError&) {
    out["length_loss" + arg] = kUnknown;
    out["length_accuracy" + arg] = kUnknown;
  }
}

// A token made absent: inserted into the probe with its residual set to zero entering every layer
// (OAttention's presence is then exactly 0). Records every layer's attention output and the
// weights queries give the absent token.
class AbsentTokenHooks : public ForwardHooks {
 public:
  explicit AbsentTokenHooks(int absent) : absent_(absent) {}
  bool wants(HookSite site, int) const override {
    return site == HookSite::attn_out || (absent_ >= 0 && (site == HookSite::resid_pre || site == HookSite::attn_pattern));
  }
  void at(const Activation& a) override {
    if (a.site == HookSite::resid_pre) std::fill(a.row(0, 0, absent_), a.row(0, 0, absent_) + a.width, 0.0f);
    if (a.site == HookSite::attn_out) outputs.emplace_back(a.data, a.data + a.size());
    if (a.site == HookSite::attn_pattern)  // head-major [H, T(query), T(key)]: the absent key's column
      for (int h = 0; h < a.heads; ++h)
        for (int q = absent_; q < a.T; ++q) absentWeight = std::max(absentWeight, double(a.row(0, h, q)[absent_]));
  }
  std::vector<std::vector<float>> outputs;  // per layer, [T, d_model]
  double absentWeight = 0;

 private:
  int absent_;
};

void addAbsentToken(const TraceSnapshot& snapshot, TourNumbers& out) {
  const Model& model = *snapshot.model->model;
  std::vector<int> tokens = snapshot.trace.tokens;  // the probe, less its last token if it fills the context
  if (int(tokens.size()) >= model.config().context) tokens.resize(size_t(model.config().context - 1));
  const int T = int(tokens.size()), at = T / 2, width = model.config().d_model;
  if (T < 2) throw std::invalid_argument("absent token: the probe needs at least 2 tokens");
  std::vector<int> targets(T + 1, -1);
  auto ws = makeWorkspace();
  AbsentTokenHooks plain(-1), absent(at);
  ws->hooks = &plain;
  model.forward(*ws, tokens.data(), targets.data(), 1, T);
  tokens.insert(tokens.begin() + at, tokens[at]);
  ws->hooks = &absent;
  model.forward(*ws, tokens.data(), targets.data(), 1, T + 1);
  double change = 0;
  for (size_t l = 0; l < plain.outputs.size(); ++l)
    for (int t = 0; t < T; ++t) {
      const int shifted = t < at ? t : t + 1;
      for (int c = 0; c < width; ++c)
        change = std::max(change, double(std::abs(plain.outputs[l][size_t(t) * width + c] - absent.outputs[l][size_t(shifted) * width + c])));
    }
  out["absent_token_change"] = change;
  out["absent_token_weight"] = absent.absentWeight;
}

// Numbers read off the probe's trace of one head: position arguments are 1-based.
void addTraceNumber(const TourCall& call, const TraceSnapshot& snapshot, TourNumbers& out) {
  const Model& model = *snapshot.model->model;
  const HeadRef ref = headOf(call, model);
  const HeadTrace& h = snapshot.trace.layers.at(ref.layer).heads.at(ref.head);
  const int T = int(h.weights.rows());
  auto position = [&](size_t i) {
    const double p = call.numberArg(i);
    if (!(p >= 1 && p <= T && p == std::floor(p)))
      throw std::invalid_argument(call.key() + ": the probe has positions 1.." + std::to_string(T));
    return int(p) - 1;
  };
  if (call.name == "mean_output_gate") {  // unknown without an output gate
    double sum = 0;
    for (float g : h.output_gate) sum += g;
    out[call.key()] = h.output_gate.empty() ? kUnknown : sum / h.output_gate.size();
    return;
  }
  if (call.name == "zero_weights" || call.name == "zero_weight_share") {
    long zeros = 0, visible = 0;
    for (int i = 0; i < T; ++i)
      for (int j = 0; j < T; ++j)
        if (std::isfinite(h.scores(i, j))) {
          ++visible;
          zeros += h.weights(i, j) == 0.0f;
        }
    out[call.key()] = call.name == "zero_weights" ? double(zeros) : visible ? double(zeros) / visible : kUnknown;
    return;
  }
  const int q = position(2);
  if (call.name == "row_sum" || call.name == "top_key" || call.name == "top_weight" || call.name == "visible_keys") {
    double sum = 0, best = -1;
    int top = 0, visible = 0;
    for (int j = 0; j < T; ++j) {
      if (!std::isfinite(h.scores(q, j))) continue;
      ++visible;
      sum += h.weights(q, j);
      if (h.weights(q, j) > best) best = h.weights(q, j), top = j;
    }
    out[call.key()] = call.name == "row_sum" ? sum : call.name == "top_key" ? top + 1 : call.name == "top_weight" ? best : visible;
    return;
  }
  if (call.name == "head_output") {  // o_i,c = sum_j a_ij v_jc, the c-th number (1-based) of the head's output
    const double c = call.numberArg(3);
    if (!(c >= 1 && c <= h.v.cols() && c == std::floor(c)))
      throw std::invalid_argument(call.key() + ": the head has output dimensions 1.." + std::to_string(h.v.cols()));
    double o = 0;
    for (int j = 0; j < T; ++j) o += double(h.weights(q, j)) * h.v(j, int(c) - 1);
    out[call.key()] = o;
    return;
  }
  const int k = position(3);
  if (call.name == "weight") out[call.key()] = h.weights(q, k);
  if (call.name == "score" && std::isfinite(h.scores(q, k))) out[call.key()] = h.scores(q, k);  // masked: unknown
  if (call.name == "qk_score") {
    const int d = int(h.q.cols());
    double dot = 0;
    for (int c = 0; c < d; ++c) dot += double(h.q(q, c)) * h.k(k, c);
    out[call.key()] = dot / std::sqrt(double(d));
  }
}

}  // namespace

const std::vector<TourNumberSpec>& tourNumberSpecs() {
  static const std::vector<TourNumberSpec> specs = {
      {"step", {}, "optimiser steps done"},
      {"total_steps", {}, "steps the run is set to train"},
      {"train_target", {}, "the step the tour's latest @train trained to (the most steps of a @train-until)"},
      {"loss", {}, "the latest training loss"},
      {"val_loss", {}, "the latest validation loss"},
      {"val_perplexity", {}, "e to the validation loss"},
      {"accuracy", {}, "the latest validation accuracy (0..1; tasks with answers)"},
      {"layer", {}, "the selected layer"},
      {"head", {}, "the selected head"},
      {"n_layers", {}, "layers of the model"},
      {"n_heads", {}, "heads per layer"},
      {"d_head", {}, "dimensions of one head's q, k and v"},
      {"probe_length", {}, "tokens in the probe"},
      {"train_length", {}, "tokens per training sequence"},
      {"kv_bytes_per_token", {}, "bytes the KV cache holds per token (every layer's keys and values)"},
      {"induction", {"L", "H"}, "induction score: weight on the token after the earlier copy, on repeated random sequences"},
      {"prev_token", {"L", "H"}, "previous-token score: mean weight on the key just before the query"},
      {"sink", {"L", "H"}, "mean weight on the first token"},
      {"entropy", {"L", "H"}, "mean entropy of the head's rows (nats)"},
      {"distance", {"L", "H"}, "mean distance from a query to the keys it attends to"},
      {"best_induction", {}, "the largest induction score of any head"},
      {"best_induction_layer", {}, "layer of that head"},
      {"best_induction_head", {}, "head of that head"},
      {"best_prev_token", {}, "the largest previous-token score of any head"},
      {"best_prev_token_layer", {}, "layer of that head"},
      {"best_prev_token_head", {}, "head of that head"},
      {"best_sink", {}, "the largest sink score (mean weight on the first token) of any head"},
      {"best_sink_layer", {}, "layer of that head"},
      {"best_sink_head", {}, "head of that head"},
      {"mean_sink", {}, "the sink score averaged over every head"},
      {"uniform_sink", {}, "the sink score of a head spreading its weight evenly over what it sees"},
      {"mean_output_gate", {"L", "H"}, "the head's output gate averaged over the probe's queries (n/a without an output gate)"},
      {"qk_radius_over_null", {"L", "H"}, "largest |eigenvalue| of W_q^T W_k over the radius of the random (Ginibre) null disk"},
      {"qk_imaginary_share", {"L", "H"}, "sum Im(lambda)^2 / sum |lambda|^2 of W_q^T W_k: 0 matching, about 0.5 random, 1 pure rotation"},
      {"qk_skew_share", {"L", "H"}, "share of W_q^T W_k's energy in its antisymmetric part"},
      {"rope_rotational_share", {"L", "H"}, "under RoPE, how rotational the head's rotated pairs are (0 content, 1 position); n/a otherwise"},
      {"length_loss", {"m"}, "validation loss on sequences m times the training length (n/a where the positions do not reach)"},
      {"length_accuracy", {"m"}, "validation accuracy at m times the training length (tasks with answers)"},
      {"length_reaches", {"m"}, "1 when the model's positions reach m times the training length (a learned table ends at the context), else 0"},
      {"parameters", {}, "the model's parameter count"},
      {"absent_token_change", {}, "largest change of any layer's attention output for the probe's tokens (at most context - 1) when a token with a zero residual is inserted in their middle"},
      {"absent_token_weight", {}, "the largest weight any head gives that inserted token"},
      {"kept", {"name"}, "a number an earlier step kept with @keep name EXPRESSION"},
      {"weight", {"L", "H", "q", "k"}, "attention weight of query position q on key position k in the probe"},
      {"score", {"L", "H", "q", "k"}, "the score before normalisation, positional bias included (n/a where masked)"},
      {"qk_score", {"L", "H", "q", "k"}, "q.k / sqrt(d_head) from the traced q and k (no bias)"},
      {"row_sum", {"L", "H", "q"}, "sum of query q's weights over its visible keys"},
      {"top_key", {"L", "H", "q"}, "the key position query q attends to most"},
      {"top_weight", {"L", "H", "q"}, "the largest weight of query q"},
      {"visible_keys", {"L", "H", "q"}, "keys query q may see (not masked)"},
      {"head_output", {"L", "H", "q", "c"}, "number c of the head's output for query q: sum over keys of weight times value"},
      {"zero_weights", {"L", "H"}, "visible (query, key) pairs in the probe whose weight is exactly 0"},
      {"zero_weight_share", {"L", "H"}, "the same as a share of the visible pairs"},
      {"ablation", {"L", "H"}, "validation loss rise when the head is switched off"},
      {"intact_loss", {}, "validation loss with the heads as shown"},
      {"most_important_layer", {}, "layer of the head whose ablation raises the loss most"},
      {"most_important_head", {}, "head of that head"},
      {"patch_effect", {"L", "H"}, "activation patching of the head's output, clean probe into the probe with its first half redrawn: share of the clean logit difference it brings back (1 all, 0 none)"},
      {"best_patch_effect", {}, "the largest patch_effect of any head"},
      {"best_patch_layer", {}, "layer of that head"},
      {"best_patch_head", {}, "head of that head"},
      {"patch_clean_diff", {}, "logit difference (answer minus the corrupted run's top other token) on the clean probe's last position"},
      {"patch_corrupt_diff", {}, "the same on the corrupted probe"},
      {"most_important_ablation", {}, "its loss rise"},
      {"least_important_ablation", {}, "the smallest loss rise of any head"},
      {"drop_metric", {"order", "n"}, "task metric (accuracy, or loss) after removing n heads in order ascending, descending or random"},
      {"kv_ppl", {"policy", "budget"}, "perplexity decoding 12 validation sequences through the KV cache under policy and budget (0: unlimited)"},
      {"kv_live_share", {"policy", "budget"}, "share of the positions seen that stay in the cache, averaged over the decoding"},
  };
  return specs;
}

std::string checkTourCall(const TourCall& call) {
  for (const TourNumberSpec& spec : tourNumberSpecs()) {
    if (spec.name != call.name) continue;
    if (spec.args.size() == call.args.size()) return {};
    std::string form = spec.name;
    if (!spec.args.empty()) {
      form += "(";
      for (size_t i = 0; i < spec.args.size(); ++i) form += (i ? ", " : "") + spec.args[i];
      form += ")";
    }
    return "'" + call.name + "' takes " + std::to_string(spec.args.size()) + " argument(s): " + form;
  }
  return "unknown number '" + call.name + "' (the user guide lists them)";
}

std::vector<int> corruptedTwin(const std::vector<int>& clean, int vocab) {
  std::vector<int> corrupt = clean;
  Rng rng(kCorruptSeed);
  for (size_t i = 0; i < clean.size() / 2 && vocab > 1; ++i)
    do corrupt[i] = rng.uniformInt(0, vocab - 1);
    while (corrupt[i] == clean[i]);
  return corrupt;
}

TourNumbers computeTourNumbers(const std::vector<TourCall>& calls, const TourRunState& state) {
  TourNumbers out;
  const ProgressSnapshot& p = state.progress;
  if (state.hasProgress) {
    out["step"] = p.step;
    out["total_steps"] = p.total_steps;
    if (state.trainTarget > 0) out["train_target"] = state.trainTarget;
    out["loss"] = p.loss;
    out["val_loss"] = p.val_loss;
    out["val_perplexity"] = std::exp(p.val_loss);
    out["accuracy"] = p.accuracy;
  }
  out["layer"] = state.selectedLayer + 1;
  out["head"] = state.selectedHead + 1;
  if (!state.trace || !state.trace->model || !state.trace->model->model || !state.trace->model->run) return out;
  const ModelSnapshot& snapshot = *state.trace->model;
  const ModelConfig& m = snapshot.model->config();
  out["n_layers"] = m.n_layers;
  out["n_heads"] = m.n_heads;
  out["d_head"] = m.headDim();
  out["kv_bytes_per_token"] = double(kvCacheBytesPerToken(m));
  out["probe_length"] = double(state.trace->trace.tokens.size());
  out["train_length"] = snapshot.run->sequenceLength;
  size_t parameters = 0;
  for (const auto& p : snapshot.model->params().all()) parameters += size_t(p->value.size());
  out["parameters"] = double(parameters);
  // "L" and "H" stand for the selected layer and head, "last" for the probe's last position: the
  // value is computed for the call they resolve to and also filed under the call as written.
  std::vector<TourCall> resolved;
  std::vector<std::pair<std::string, std::string>> aliases;
  for (TourCall call : calls) {
    const std::string written = call.key();
    for (size_t i = 0; i < call.args.size(); ++i) {
      if (call.args[i] == "L" && i == 0) call.args[i] = std::to_string(state.selectedLayer + 1);
      if (call.args[i] == "H" && i == 1) call.args[i] = std::to_string(state.selectedHead + 1);
      if (call.args[i] == "last" && i >= 2) call.args[i] = std::to_string(state.trace->trace.tokens.size());
    }
    if (call.key() != written) aliases.push_back({written, call.key()});
    resolved.push_back(call);
  }
  bool diagnostics = false, importance = false, spectrum = false, patching = false;
  std::vector<const TourCall*> cache, lengths;
  for (const TourCall& call : resolved) {
    if (out.count(call.key())) continue;
    if (const std::string why = checkTourCall(call); !why.empty()) throw std::invalid_argument(why);
    if (kDiagnostics.count(call.name)) diagnostics = true;
    else if (kImportance.count(call.name)) importance = true;
    else if (kSpectrum.count(call.name)) spectrum = true;
    else if (kPatching.count(call.name)) patching = true;
    else if (kLength.count(call.name)) lengths.push_back(&call);
    else if (call.name.rfind("kv_", 0) == 0) cache.push_back(&call);
    else if (call.name == "absent_token_change" || call.name == "absent_token_weight") addAbsentToken(*state.trace, out);
    else if (call.name == "kept") {
      const auto it = state.kept.find(call.args.at(0));
      out[call.key()] = it == state.kept.end() ? kUnknown : it->second;
    } else if (!call.args.empty()) addTraceNumber(call, *state.trace, out);
  }
  if (diagnostics) addDiagnostics(resolved, snapshot, state.trace->trace.tokens, out);
  if (importance) addImportance(resolved, snapshot, out);
  if (spectrum) addSpectrum(resolved, snapshot, out);
  if (patching) addPatching(resolved, snapshot, state.trace->trace.tokens, out);
  for (const TourCall* call : lengths)
    if (!out.count(call->key())) addLength(*call, snapshot, out);
  for (const TourCall* call : cache)
    if (!out.count(call->key())) addCache(*call, snapshot, out);
  for (const auto& [written, key] : aliases)
    if (out.count(key)) out[written] = out[key];
  return out;
}

}  // namespace attnlab
