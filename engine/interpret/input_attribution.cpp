#include "interpret/input_attribution.h"

#include <cmath>
#include <sstream>
#include <stdexcept>

#include "analysis/rollout.h"
#include "interpret/interpret_support.h"
#include "interpret/interpretation.h"
#include "model/workspace.h"

namespace attnlab {

double kendallTau(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) throw std::invalid_argument("Kendall's tau needs two lists of equal length");
  double concordant = 0, discordant = 0, tiesA = 0, tiesB = 0;
  for (size_t i = 0; i < a.size(); ++i)
    for (size_t j = i + 1; j < a.size(); ++j) {
      const double da = a[i] - a[j], db = b[i] - b[j];
      if (da == 0 && db == 0) continue;
      if (da == 0) ++tiesA;
      else if (db == 0) ++tiesB;
      else if ((da > 0) == (db > 0)) ++concordant;
      else ++discordant;
    }
  const double denominator = std::sqrt((concordant + discordant + tiesA) * (concordant + discordant + tiesB));
  return denominator > 0 ? (concordant - discordant) / denominator : 0.0;
}

InputAttribution inputAttribution(const Model& model, const std::vector<int>& tokens, int token) {
  const ModelConfig& c = model.config();
  checkPrompt(c, tokens, "attribution");
  if (token < -1 || token >= c.vocab) throw std::invalid_argument("token id " + std::to_string(token) + " is outside the vocabulary");
  const int T = static_cast<int>(tokens.size());
  const std::unique_ptr<Model> copy = copyModel(model);  // backward() accumulates into its own gradients
  auto ws = makeWorkspace();
  InputAttribution out;
  out.token = token;
  if (token < 0) {
    const std::vector<int> none(T, -1);
    copy->forward(*ws, tokens.data(), none.data(), 1, T);
    ws->logits.row(T - 1).maxCoeff(&out.token);
  }
  // loss = -log p(token) at the last position: its gradient is minus the one attributed.
  std::vector<int> targets(T, -1);
  targets[T - 1] = out.token;
  Trace trace;
  copy->forward(*ws, tokens.data(), targets.data(), 1, T, &trace);
  ws->keep_embedding_grad = true;
  copy->backward(*ws);
  const Mat& x = ws->blocks.at(0).x;
  const Mat rollout = attentionRollout(trace);
  const LayerTrace& last = trace.layers.back();
  for (int t = 0; t < T; ++t) {
    out.grad_x_input.push_back(-static_cast<double>(x.row(t).dot(ws->d_embeddings.row(t))));
    double mean = 0;
    for (const HeadTrace& h : last.heads) mean += h.weights(T - 1, t);
    out.attention.push_back(mean / last.heads.size());
    out.rollout.push_back(rollout(T - 1, t));
  }
  std::vector<double> magnitude;
  for (double a : out.grad_x_input) magnitude.push_back(std::abs(a));
  out.tau_attention = kendallTau(magnitude, out.attention);
  out.tau_rollout = kendallTau(magnitude, out.rollout);
  return out;
}

namespace {

class AttributionInterpretation : public Interpretation {
 public:
  Json run(const Model& model, const InterpretRequest& r) const override {
    const InputAttribution a = inputAttribution(model, r.tokens, r.token);
    Json rows = Json::array();
    for (size_t t = 0; t < a.grad_x_input.size(); ++t)
      rows.push_back({{"position", t},
                      {"label", tokenLabel(r, r.tokens[t])},
                      {"value", a.grad_x_input[t]},
                      {"attention", a.attention[t]},
                      {"rollout", a.rollout[t]}});
    return {{"token", a.token}, {"label", tokenLabel(r, a.token)}, {"kendall_tau_attention", a.tau_attention},
            {"kendall_tau_rollout", a.tau_rollout}, {"results", std::move(rows)}};
  }
  std::string describe(const Json& j) const override {
    std::ostringstream out;
    out << "gradient x input for '" << j["label"].get<std::string>() << "'; Kendall tau with attention "
        << j["kendall_tau_attention"].get<double>() << ", with rollout " << j["kendall_tau_rollout"].get<double>() << "\n";
    for (const Json& row : j["results"])
      out << "  " << row["position"].get<int>() << " '" << row["label"].get<std::string>() << "': " << row["value"].get<double>()
          << "  attention " << row["attention"].get<double>() << "  rollout " << row["rollout"].get<double>() << "\n";
    return out.str();
  }
  std::string inputs() const override { return "--text|--ids [--token TOKEN]"; }
};

ATTNLAB_REGISTER(InterpretationRegistry, "attribution",
                 "gradient x input per token for the prediction, beside attention and rollout, with Kendall's tau",
                 [] { return std::make_unique<AttributionInterpretation>(); });

}  // namespace

}  // namespace attnlab
