#include "interpret/direct_logit_attribution.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "interpret/activation_hooks.h"
#include "interpret/interpret_support.h"
#include "interpret/interpretation.h"

namespace attnlab {
namespace {

// logit_v's linear map with the final norm's scale frozen at its value on the final residual x:
// LayerNorm c -> rstd * (w * (c - mean(c))) . u_v, RMSNorm c -> rstd * (w * c) . u_v. Centring is
// linear, so the terms of x map to terms that sum to the logit less the norm's own bias term.
struct FrozenReadout {
  Eigen::VectorXd direction;  // w * u_v
  double rstd;
  bool centre;
  double operator()(const Eigen::VectorXd& c) const {
    return rstd * (centre ? (c.array() - c.mean()).matrix().dot(direction) : c.dot(direction));
  }
};

// As ops::layerNormForward and ops::rmsNormForward compute it, in float64.
double frozenRstd(const ModelConfig& c, const Eigen::VectorXd& x) {
  const double meanSquare = c.norm == "rmsnorm" ? x.squaredNorm() / x.size() : (x.array() - x.mean()).square().mean();
  return 1.0 / std::sqrt(meanSquare + c.norm_eps);
}

Eigen::VectorXd rowVector(const Mat& m) { return m.row(0).transpose().cast<double>(); }

}  // namespace

DirectLogitAttribution directLogitAttribution(const Model& model, const std::vector<int>& tokens, int token, int position) {
  const ModelConfig& c = model.config();
  checkPrompt(c, tokens, "attribution");
  const int T = static_cast<int>(tokens.size());
  if (position < -1 || position >= T) throw std::invalid_argument("position " + std::to_string(position) + " is outside the prompt");
  if (token < -1 || token >= c.vocab) throw std::invalid_argument("token id " + std::to_string(token) + " is outside the vocabulary");
  const int t = position < 0 ? T - 1 : position;
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
  const Eigen::VectorXd w = rowVector(paramValue(model, "ln_f.weight"));
  const Param* finalBias = model.params().find("ln_f.bias");
  const Eigen::VectorXd x = Eigen::Map<const Eigen::VectorXf>(rec.get(HookSite::resid_post, c.n_layers - 1).row(0, t), c.d_model).cast<double>();
  const FrozenReadout readout{w.cwiseProduct(u), frozenRstd(c, x), c.norm != "rmsnorm"};
  auto rowOf = [&](HookSite s, int l, int h = 0) {
    const RecordedActivation& r = rec.get(s, l);
    return Eigen::Map<const Eigen::VectorXf>(r.row(h, t), r.width).cast<double>().eval();
  };
  auto add = [&](std::string name, int l, int h, double value) { out.terms.push_back({std::move(name), l, h, value}); };

  add("embed", -1, -1, readout(rowOf(HookSite::resid_pre, 0)));
  // Sequential or parallel, a block adds attn_out + mlp_out to the stream, so the same terms cover
  // both layouts; output biases are constant terms of their own.
  for (int l = 0; l < c.n_layers; ++l) {
    const std::string block = "blocks." + std::to_string(l);
    const Mat& wo = paramValue(model, block + ".attn.wo.weight");
    for (int h = 0; h < c.n_heads; ++h)  // W_O^h z^h: the head's columns of the output projection
      add("L" + std::to_string(l) + "H" + std::to_string(h), l, h,
          readout(wo.middleCols(h * c.headDim(), c.headDim()).cast<double>() * rowOf(HookSite::attn_head_out, l, h)));
    if (const Param* bias = model.params().find(block + ".attn.wo.bias")) add("attn " + std::to_string(l) + " bias", l, -1, readout(rowVector(bias->value)));
    if (c.attention_only) continue;
    const Param* bias = model.params().find(block + ".mlp.proj.bias");
    const Eigen::VectorXd b = bias ? rowVector(bias->value) : Eigen::VectorXd::Zero(c.d_model);
    add("mlp " + std::to_string(l), l, -1, readout(rowOf(HookSite::mlp_out, l) - b));
    if (bias) add("mlp " + std::to_string(l) + " bias", l, -1, readout(b));
  }
  if (finalBias) add("ln_f bias", -1, -1, rowVector(finalBias->value).dot(u));
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
