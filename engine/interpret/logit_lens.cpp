#include "interpret/logit_lens.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>
#include <stdexcept>

#include "interpret/activation_hooks.h"
#include "interpret/interpret_support.h"
#include "interpret/interpretation.h"

namespace attnlab {
namespace {

LensCell cellOf(const float* logits, int vocab, int k, int token) {
  LensCell cell;
  const float maxLogit = *std::max_element(logits, logits + vocab);
  double total = 0;
  for (int v = 0; v < vocab; ++v) total += std::exp(static_cast<double>(logits[v]) - maxLogit);
  std::vector<int> order(vocab);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return logits[a] > logits[b]; });
  for (int i = 0; i < std::min(k, vocab); ++i) {
    cell.top.push_back(order[i]);
    cell.top_probs.push_back(std::exp(static_cast<double>(logits[order[i]]) - maxLogit) / total);
  }
  cell.token = token;
  cell.rank = static_cast<int>(std::find(order.begin(), order.end(), token) - order.begin());
  cell.logit = logits[token];
  cell.prob = std::exp(cell.logit - maxLogit) / total;
  return cell;
}

}  // namespace

LogitLens logitLens(const Model& model, const std::vector<int>& tokens, int k, int token) {
  const ModelConfig& c = model.config();
  checkPrompt(c, tokens, "lens");
  if (k < 1) throw std::invalid_argument("top-k must be at least 1");
  if (token >= c.vocab) throw std::invalid_argument("token id " + std::to_string(token) + " is outside the vocabulary");
  ActivationRecorder recorded([](HookSite s, int) { return s == HookSite::resid_pre || s == HookSite::resid_post; });
  const Mat modelLogits = runWithHooks(model, tokens, &recorded);

  LogitLens lens;
  for (int l = 0; l <= c.n_layers; ++l) {
    const RecordedActivation& resid = l < c.n_layers ? recorded.get(HookSite::resid_pre, l) : recorded.get(HookSite::resid_post, l - 1);
    Mat logits;
    model.unembed(resid.headRows(0), logits);
    lens.logits.push_back(std::move(logits));
  }
  const int T = static_cast<int>(tokens.size());
  for (int l = 0; l <= c.n_layers; ++l)
    for (int t = 0; t < T; ++t) {
      int tracked = token;
      if (tracked < 0) modelLogits.row(t).maxCoeff(&tracked);
      LensCell cell = cellOf(lens.logits[l].row(t).data(), c.vocab, k, tracked);
      cell.layer = l;
      cell.position = t;
      lens.cells.push_back(std::move(cell));
    }
  return lens;
}

namespace {

class LensInterpretation : public Interpretation {
 public:
  Json run(const Model& model, const InterpretRequest& r) const override {
    const LogitLens lens = logitLens(model, r.tokens, r.top_k, r.token);
    Json rows = Json::array();
    for (const LensCell& c : lens.cells) {
      Json top = Json::array();
      for (size_t i = 0; i < c.top.size(); ++i) top.push_back({{"token", c.top[i]}, {"label", tokenLabel(r, c.top[i])}, {"prob", c.top_probs[i]}});
      rows.push_back({{"layer", c.layer},
                      {"position", c.position},
                      {"token", c.token},
                      {"label", tokenLabel(r, c.token)},
                      {"rank", c.rank},
                      {"prob", c.prob},
                      {"logit", c.logit},
                      {"top", std::move(top)}});
    }
    return {{"layers", model.config().n_layers + 1}, {"positions", r.tokens.size()}, {"results", std::move(rows)}};
  }
  std::string describe(const Json& j) const override {
    std::ostringstream out;
    const int T = j["positions"].get<int>();
    out << "tracked token at the last position, per layer (layer " << j["layers"].get<int>() - 1 << " = final residual):\n";
    for (const Json& row : j["results"])
      if (row["position"].get<int>() == T - 1)
        out << "  layer " << row["layer"].get<int>() << ": top '" << row["top"][0]["label"].get<std::string>() << "' ("
            << row["top"][0]["prob"].get<double>() << "), '" << row["label"].get<std::string>() << "' rank "
            << row["rank"].get<int>() << " p " << row["prob"].get<double>() << "\n";
    return out.str();
  }
  std::string inputs() const override { return "--text|--ids [--token TOKEN] [--top K]"; }
};

ATTNLAB_REGISTER(InterpretationRegistry, "lens", "logit lens: U ln_f(resid_l) per layer and position, top-k and a tracked token",
                 [] { return std::make_unique<LensInterpretation>(); });

}  // namespace

}  // namespace attnlab
