#include <vector>

#include "attention/attention.h"
#include "attention/softmax_core.h"

namespace attnlab {
namespace {

// High-pass filter along the sequence of every [T, d_head] block: y_t = x_t + gamma (x_t - x_{t-1}).
// Our choice for the first token: no velocity before it (x_{-1} = x_0), so y_0 = x_0 unchanged.
void highPass(const float* x, int blocks, int T, int dHead, float gamma, std::vector<float>& y) {
  y.assign(x, x + static_cast<size_t>(blocks) * T * dHead);
  for (int b = 0; b < blocks; ++b) {
    const size_t off = static_cast<size_t>(b) * T * dHead;
    ConstHeadMat X(x + off, T, dHead);
    HeadMat Y(y.data() + off, T, dHead);
    Y.bottomRows(T - 1) += gamma * (X.bottomRows(T - 1) - X.topRows(T - 1));
  }
}

// Backward of highPass, in place on dy: dx_t = dy_t + gamma dy_t [t >= 1] - gamma dy_{t+1} [t + 1 < T].
void highPassBackward(float* d, int blocks, int T, int dHead, float gamma) {
  for (int b = 0; b < blocks; ++b) {
    HeadMat D(d + static_cast<size_t>(b) * T * dHead, T, dHead);
    const Mat velocityGrad = gamma * D.bottomRows(T - 1);
    D.bottomRows(T - 1) += velocityGrad;  // from y_t = x_t + gamma x_t
    D.topRows(T - 1) -= velocityGrad;     // from y_t = ... - gamma x_{t-1}
  }
}

// Momentum attention: softmax attention on high-passed queries and keys, q~_t = q_t + gamma (q_t - q_{t-1}),
// the same for keys. The filter acts on the variant's inputs, i.e. after any rotary encoding.
// Scores in the trace are those of the filtered q~, k~; the trace's q and k are the unfiltered ones.
class MomentumAttention : public AttentionVariant {
 public:
  std::vector<SettingSpec> settingSpecs() const override {
    return {temperatureSetting(),
            {"momentum_gamma", 0.5, -1, 4, false, "gamma: q~_t = q_t + gamma (q_t - q_{t-1}), keys alike (0 is softmax)"}};
  }
  std::string configure(const ModelConfig& config, const std::string&, ParamStore&) override {
    const auto specs = settingSpecs();
    beta_ = static_cast<float>(settingOr(config.attention_settings, specs[0]));
    gamma_ = static_cast<float>(settingOr(config.attention_settings, specs[1]));
    return {};
  }

  void forward(const AttentionInputs& in, AttentionOutputs& out) const override {
    std::vector<float> q, k;
    softmaxAttentionForward(filtered(in, q, k), out, beta_, 0);
  }

  void backward(const AttentionInputs& in, const AttentionOutputs& saved, AttentionGrads& g) override {
    std::vector<float> q, k;
    softmaxAttentionBackward(filtered(in, q, k), saved, g, beta_);  // gives d(loss)/d(q~), d(loss)/d(k~)
    const AttentionShape& s = in.shape;
    highPassBackward(g.d_q, s.B * s.H, s.T, s.dHead, gamma_);
    highPassBackward(g.d_k, s.B * s.Hkv, s.T, s.dHead, gamma_);
  }

  // y_t = x_t + gamma (x_t - x_{t-1}) for this token's rows, as highPass gives row t (x_{-1} = x_0)
  bool filterDecodeInputs(std::vector<float>& q, std::vector<float>& k, const std::vector<float>& previousQ,
                          const std::vector<float>& previousK) const override {
    if (previousQ.empty()) return true;  // the first token is unchanged
    for (size_t i = 0; i < q.size(); ++i) q[i] += gamma_ * (q[i] - previousQ[i]);
    for (size_t i = 0; i < k.size(); ++i) k[i] += gamma_ * (k[i] - previousK[i]);
    return true;
  }
  bool decodeRow(const DecodeRowInputs& in, float* o, float* weights) const override {
    softmaxDecodeRow(in, beta_, 0, o, weights);  // q and the cached keys are already filtered
    return true;
  }

 private:
  // The inputs with q and k replaced by their filtered copies (stored in q, k).
  AttentionInputs filtered(const AttentionInputs& in, std::vector<float>& q, std::vector<float>& k) const {
    const AttentionShape& s = in.shape;
    highPass(in.q, s.B * s.H, s.T, s.dHead, gamma_, q);
    highPass(in.k, s.B * s.Hkv, s.T, s.dHead, gamma_, k);
    AttentionInputs f = in;
    f.q = q.data();
    f.k = k.data();
    return f;
  }

  float beta_ = 1.0f;
  float gamma_ = 0.5f;
};

ATTNLAB_REGISTER(AttentionRegistry, "momentum", "softmax on q~_t = q_t + gamma (q_t - q_{t-1}), k~ alike (high-pass)",
                 [] { return std::make_unique<MomentumAttention>(); });

}  // namespace
}  // namespace attnlab
