#include "interpret/activation_patching.h"

#include <algorithm>
#include <array>
#include <sstream>
#include <stdexcept>

#include "interpret/activation_hooks.h"
#include "interpret/interpret_support.h"
#include "interpret/interpretation.h"
#include "model/workspace.h"

namespace attnlab {
namespace {

constexpr std::array<std::pair<const char*, PatchSite>, 6> kSites = {{{"resid", PatchSite::resid},
                                                                       {"attn_out", PatchSite::attn_out},
                                                                       {"mlp_out", PatchSite::mlp_out},
                                                                       {"head_out", PatchSite::head_out},
                                                                       {"pattern", PatchSite::pattern},
                                                                       {"values", PatchSite::values}}};

// The most probable token at the last position other than `except`.
int lastTop(const Mat& logits, int except = -1) {
  int best = -1;
  for (int v = 0; v < logits.cols(); ++v)
    if (v != except && (best < 0 || logits(logits.rows() - 1, v) > logits(logits.rows() - 1, best))) best = v;
  return best;
}

// The patches of a sweep, each with the row it fills.
struct PlannedPatch {
  Patch patch;
  PatchEffect where;
};

std::vector<PlannedPatch> plan(const ModelConfig& c, PatchSite site, bool perPosition, int T) {
  std::vector<PlannedPatch> out;
  auto streamSweep = [&](HookSite hook, int layers) {
    for (int l = 0; l < layers; ++l)
      for (int t = 0; t < T; ++t) out.push_back({{hook, l, -1, {t}}, {l, -1, t, 0}});
  };
  auto headSweep = [&](HookSite hook, int heads) {
    for (int l = 0; l < c.n_layers; ++l)
      for (int h = 0; h < heads; ++h) {
        if (!perPosition) out.push_back({{hook, l, h, {}}, {l, h, -1, 0}});
        for (int t = 0; perPosition && t < T; ++t) out.push_back({{hook, l, h, {t}}, {l, h, t, 0}});
      }
  };
  switch (site) {
    case PatchSite::resid:
      streamSweep(HookSite::resid_pre, c.n_layers);
      for (int t = 0; t < T; ++t) out.push_back({{HookSite::resid_post, c.n_layers - 1, -1, {t}}, {c.n_layers, -1, t, 0}});
      break;
    case PatchSite::attn_out: streamSweep(HookSite::attn_out, c.n_layers); break;
    case PatchSite::mlp_out:
      if (c.attention_only) throw std::invalid_argument("the model is attention-only: it has no MLP output to patch");
      streamSweep(HookSite::mlp_out, c.n_layers);
      break;
    case PatchSite::head_out: headSweep(HookSite::attn_head_out, c.n_heads); break;
    case PatchSite::pattern: headSweep(HookSite::attn_pattern, c.n_heads); break;
    case PatchSite::values: headSweep(HookSite::attn_v, c.kvHeads()); break;
  }
  return out;
}

// Passes of one prompt that read only its last position's logits, on one reused workspace: the
// metric needs nothing else, so the unembedding covers one row, and a pass patched at block L can
// start there from the unpatched pass's stream (the blocks before L compute the same either way).
class LastPositionRuns {
 public:
  LastPositionRuns(const Model& model, const std::vector<int>& tokens)
      : model_(model), tokens_(tokens), targets_(tokens.size(), -1), ws_(makeWorkspace()) {
    ws_->last_logits_only = true;
  }
  // Logits [1, vocab]; first > 0 starts at that block from `stream` [T, d_model].
  const Mat& run(ForwardHooks* hooks, int first = 0, const Mat* stream = nullptr) {
    ws_->hooks = hooks;
    ws_->first_layer = first;
    if (first > 0) ws_->start_stream = *stream;
    model_.forward(*ws_, tokens_.data(), targets_.data(), 1, static_cast<int>(tokens_.size()));
    return ws_->logits;
  }

 private:
  const Model& model_;
  const std::vector<int>& tokens_;
  std::vector<int> targets_;
  std::unique_ptr<Workspace> ws_;
};

}  // namespace

double lastLogitDifference(const Model& model, const std::vector<int>& tokens, ForwardHooks* hooks, int answer, int wrong) {
  LastPositionRuns runs(model, tokens);
  return logitDifference(runs.run(hooks), answer, wrong);
}

bool parsePatchSite(const std::string& name, PatchSite& site) {
  for (const auto& [n, s] : kSites)
    if (name == n) {
      site = s;
      return true;
    }
  return false;
}

double logitDifference(const Mat& logits, int answer, int wrong) {
  const Eigen::Index last = logits.rows() - 1;
  return static_cast<double>(logits(last, answer)) - static_cast<double>(logits(last, wrong));
}

PatchingResult activationPatching(const Model& model, const PatchingRequest& r, const std::function<bool(int, int)>& progress) {
  const ModelConfig& c = model.config();
  const std::vector<int>& source = r.source.empty() ? r.clean : r.source;
  checkPrompt(c, r.clean, "clean");
  checkPrompt(c, r.corrupt, "corrupted");
  checkPrompt(c, source, "source");
  if (r.clean.size() != r.corrupt.size() || source.size() != r.corrupt.size())
    throw std::invalid_argument("the clean and corrupted prompts have " + std::to_string(r.clean.size()) + " and " +
                                std::to_string(r.corrupt.size()) + " tokens; patching needs equal lengths");
  const int T = static_cast<int>(r.corrupt.size());

  ActivationRecorder recorded;
  runWithHooks(model, source, &recorded);
  LastPositionRuns cleanRuns(model, r.clean), corruptRuns(model, r.corrupt);
  const Mat cleanLogits = cleanRuns.run(nullptr);
  ActivationRecorder corruptStreams([](HookSite s, int) { return s == HookSite::resid_pre; });
  const Mat corruptLogits = corruptRuns.run(&corruptStreams);

  PatchingResult result;
  result.answer = r.answer >= 0 ? r.answer : lastTop(cleanLogits);
  result.wrong = r.wrong >= 0 ? r.wrong : lastTop(corruptLogits, result.answer);
  for (int id : {result.answer, result.wrong})
    if (id >= c.vocab) throw std::invalid_argument("token id " + std::to_string(id) + " is outside the vocabulary");
  if (result.answer == result.wrong)
    throw std::invalid_argument("the answer and the wrong token are the same (token " + std::to_string(result.answer) + "): give --answer and --wrong");
  result.clean_diff = logitDifference(cleanLogits, result.answer, result.wrong);
  result.corrupt_diff = logitDifference(corruptLogits, result.answer, result.wrong);
  const double span = result.clean_diff - result.corrupt_diff;
  if (span == 0) throw std::invalid_argument("the clean and corrupted prompts give the same logit difference: nothing to restore");

  const std::vector<PlannedPatch> patches = plan(c, r.site, r.perPosition, T);
  std::vector<Mat> streams(c.n_layers);  // the corrupted stream entering each block
  for (int l = 1; l < c.n_layers; ++l) streams[l] = corruptStreams.get(HookSite::resid_pre, l).headRows(0);
  for (size_t i = 0; i < patches.size(); ++i) {
    if (progress && !progress(static_cast<int>(i), static_cast<int>(patches.size()))) break;
    ActivationPatcher patcher(recorded, {patches[i].patch});
    PatchEffect row = patches[i].where;
    // every patched site lies in this block; cross-layer KV: start at its group's first, whose K/V it reads
    const int first = c.kvSourceOf(patches[i].patch.layer);
    const double patched = logitDifference(corruptRuns.run(&patcher, first, &streams[first]), result.answer, result.wrong);
    row.effect = (patched - result.corrupt_diff) / span;
    result.rows.push_back(row);
  }
  return result;
}

namespace {

Json effectRow(const PatchEffect& e) {
  Json row = {{"layer", e.layer}};
  if (e.head >= 0) row["head"] = e.head;
  if (e.position >= 0) row["position"] = e.position;
  row["effect"] = e.effect;
  return row;
}

class PatchInterpretation : public Interpretation {
 public:
  Json run(const Model& model, const InterpretRequest& r) const override {
    PatchingRequest request{r.clean, r.corrupt, {}, r.answer, r.wrong, PatchSite::resid, r.perPosition};
    if (!parsePatchSite(r.site, request.site))
      throw std::invalid_argument("unknown patching site '" + r.site + "' (known: " + kPatchSiteNames + ")");
    const PatchingResult result = activationPatching(model, request, r.progress);
    Json rows = Json::array();
    for (const PatchEffect& e : result.rows) rows.push_back(effectRow(e));
    return {{"site", r.site},
            {"per_position", r.perPosition},
            {"answer", result.answer},
            {"answer_label", tokenLabel(r, result.answer)},
            {"wrong", result.wrong},
            {"wrong_label", tokenLabel(r, result.wrong)},
            {"clean_logit_diff", result.clean_diff},
            {"corrupt_logit_diff", result.corrupt_diff},
            {"results", std::move(rows)}};
  }
  std::string describe(const Json& j) const override {
    std::ostringstream out;
    out << "logit difference '" << j["answer_label"].get<std::string>() << "' - '" << j["wrong_label"].get<std::string>()
        << "': clean " << j["clean_logit_diff"].get<double>() << ", corrupted " << j["corrupt_logit_diff"].get<double>() << "\n";
    std::vector<Json> rows(j["results"].begin(), j["results"].end());
    std::stable_sort(rows.begin(), rows.end(), [](const Json& a, const Json& b) {
      return std::abs(a["effect"].get<double>()) > std::abs(b["effect"].get<double>());
    });
    out << "strongest " << std::min<size_t>(8, rows.size()) << " of " << rows.size() << " patches (" << j["site"].get<std::string>() << "):\n";
    for (size_t i = 0; i < std::min<size_t>(8, rows.size()); ++i) {
      const Json& row = rows[i];
      out << "  layer " << row["layer"].get<int>();
      if (row.contains("head")) out << " head " << row["head"].get<int>();
      if (row.contains("position")) out << " position " << row["position"].get<int>();
      out << ": effect " << row["effect"].get<double>() << "\n";
    }
    return out.str();
  }
  std::string inputs() const override { return "--clean --corrupt [--answer --wrong] [--site SITE] [--per-position]"; }
};

ATTNLAB_REGISTER(InterpretationRegistry, "patch",
                 "activation patching: (LD_patched - LD_corrupt) / (LD_clean - LD_corrupt) per layer x position or head",
                 [] { return std::make_unique<PatchInterpretation>(); });

}  // namespace

}  // namespace attnlab
