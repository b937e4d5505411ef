#include "interpret/direct_logit_attribution.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "interpret/activation_hooks.h"
#include "interpret/interpret_support.h"
#include "interpret/interpretation.h"

namespace attnlab {
namespace {

// logit_v's linear map with the norm's scale frozen: c -> rstd * (w * (c - mean(c))) . u_v.
struct FrozenReadout {
  Eigen::VectorXd direction;  // w * u_v
  double rstd;
  double operator()(const Eigen::VectorXd& c) const { return rstd * (c.array() - c.mean()).matrix().dot(direction); }
};

}  // namespace

DirectLogitAttribution directLogitAttribution(const Model& model, const std::vector<int>& tokens, int token, int position) {
  const ModelConfig& c = model.config();
  checkPrompt(c, tokens, "attribution");
  const int T = static_cast<int>(tokens.size());
  if (position < -1 || position >= T) throw std::invalid_argument("position " + std::to_string(position) + " is outside the prompt");
  if (token < -1 || token >= c.vocab) throw std::invalid_argument("token id " + std::to_string(token) + " is outside the vocabulary");
  const int t = position < 0 ? T - 1 : position;
  // The decomposition below freezes a LayerNorm with bias and splits off the MLP's output bias; the
  // blocks of pretrained models (RMSNorm, output biases, bias-free MLPs) would leave terms unnamed.
  if (c.norm != "layernorm" || c.out_bias || (!c.attention_only && !c.mlp_bias))
    throw std::invalid_argument("direct logit attribution needs the lab's block layout (LayerNorm with bias, no attention output "
                                "bias, MLP biases); this model has model.norm " + c.norm +
                                (c.out_bias ? ", an output bias" : "") + (!c.mlp_bias ? ", a bias-free MLP" : ""));
  ActivationRecorder rec([](HookSite s, int) {
    return s == HookSite::resid_pre || s == HookSite::attn_head_out || s == HookSite::mlp_out || s == HookSite::resid_post;
  });
  const Mat logits = runWithHooks(model, tokens, &rec);

  DirectLogitAttribution out;
  out.position = t;
  out.token = token;
  if (token < 0) logits.row(t).maxCoeff(&out.token);
  out.logit = logits(t, out.token);

  const Param* head = model.params().find("head.weight");
  const Eigen::VectorXd u = (head ? head->value : paramValue(model, "tok_emb.weight")).row(out.token).transpose().cast<double>();
  const Eigen::VectorXd w = paramValue(model, "ln_f.weight").row(0).transpose().cast<double>();
  const Eigen::VectorXd b = paramValue(model, "ln_f.bias").row(0).transpose().cast<double>();
  const Eigen::VectorXd x = Eigen::Map<const Eigen::VectorXf>(rec.get(HookSite::resid_post, c.n_layers - 1).row(0, t), c.d_model).cast<double>();
  const double rstd = 1.0 / std::sqrt((x.array() - x.mean()).square().mean() + c.norm_eps);  // as ops::layerNormForward
  const FrozenReadout readout{w.cwiseProduct(u), rstd};
  auto rowOf = [&](HookSite s, int l, int h = 0) {
    const RecordedActivation& r = rec.get(s, l);
    return Eigen::Map<const Eigen::VectorXf>(r.row(h, t), r.width).cast<double>().eval();
  };
  auto add = [&](std::string name, int l, int h, double value) { out.terms.push_back({std::move(name), l, h, value}); };

  add("embed", -1, -1, readout(rowOf(HookSite::resid_pre, 0)));
  for (int l = 0; l < c.n_layers; ++l) {
    const Mat& wo = paramValue(model, "blocks." + std::to_string(l) + ".attn.wo.weight");
    for (int h = 0; h < c.n_heads; ++h)  // W_O^h z^h: the head's columns of the output projection
      add("L" + std::to_string(l) + "H" + std::to_string(h), l, h,
          readout(wo.middleCols(h * c.headDim(), c.headDim()).cast<double>() * rowOf(HookSite::attn_head_out, l, h)));
    if (c.attention_only) continue;
    const Eigen::VectorXd bias = paramValue(model, "blocks." + std::to_string(l) + ".mlp.proj.bias").row(0).transpose().cast<double>();
    add("mlp " + std::to_string(l), l, -1, readout(rowOf(HookSite::mlp_out, l) - bias));
    add("mlp " + std::to_string(l) + " bias", l, -1, readout(bias));
  }
  add("ln_f bias", -1, -1, b.dot(u));
  for (const DlaTerm& term : out.terms) out.sum += term.value;
  return out;
}

namespace {

class DlaInterpretation : public Interpretation {
 public:
  Json run(const Model& model, const InterpretRequest& r) const override {
    const DirectLogitAttribution d = directLogitAttribution(model, r.tokens, r.token);
    Json rows = Json::array();
    for (const DlaTerm& t : d.terms) {
      Json row = {{"name", t.name}};
      if (t.layer >= 0) row["layer"] = t.layer;
      if (t.head >= 0) row["head"] = t.head;
      row["value"] = t.value;
      rows.push_back(std::move(row));
    }
    return {{"token", d.token}, {"label", tokenLabel(r, d.token)}, {"position", d.position}, {"logit", d.logit}, {"sum", d.sum}, {"results", std::move(rows)}};
  }
  std::string describe(const Json& j) const override {
    std::ostringstream out;
    out << "logit of '" << j["label"].get<std::string>() << "' at position " << j["position"].get<int>() << ": "
        << j["logit"].get<double>() << " (terms sum to " << j["sum"].get<double>() << ")\n";
    std::vector<Json> rows(j["results"].begin(), j["results"].end());
    std::stable_sort(rows.begin(), rows.end(), [](const Json& a, const Json& b) { return std::abs(a["value"].get<double>()) > std::abs(b["value"].get<double>()); });
    for (size_t i = 0; i < std::min<size_t>(10, rows.size()); ++i)
      out << "  " << rows[i]["name"].get<std::string>() << ": " << rows[i]["value"].get<double>() << "\n";
    return out.str();
  }
  std::string inputs() const override { return "--text|--ids [--token TOKEN]"; }
};

ATTNLAB_REGISTER(InterpretationRegistry, "dla",
                 "direct logit attribution: each head's and MLP's term of a logit, final-norm scale frozen; terms sum to the logit",
                 [] { return std::make_unique<DlaInterpretation>(); });

}  // namespace

}  // namespace attnlab
