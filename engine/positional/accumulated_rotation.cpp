#include <cmath>
#include <stdexcept>

#include "positional/positional.h"

namespace attnlab {
namespace {

const SettingSpec kTheta{"theta", 10000.0, 2.0, 1e9, false, "base of the starting frequencies theta^(-2m/d_h), as in RoPE"};
const SettingSpec kFraction{"rotary_fraction", 1.0, 0.0, 1.0, false, "share of each head's dimensions that rotate"};
const SettingSpec kOmegaMode{"omega_mode", 0, 0, 1, true,
                             "0: increments learned from the token, softplus(W x + b); 1: random, fixed per token id"};
const SettingSpec kRotateValues{"rotate_values", 0, 0, 1, true,
                                "1: rotate values by phi_j and each head output back by -phi_i (values carry relative phase)"};

inline double softplus(double z) { return z > 20 ? z : std::log1p(std::exp(z)); }
inline double sigmoid(double z) { return 1.0 / (1.0 + std::exp(-z)); }

// Accumulated rotation: RoPE's 2x2 blocks, but pair m of token t turns by phi_{t,m} = sum_{s<=t} omega_m(x_s), an
// angle accumulated along the sequence from per-token increments:
//   omega_mode 0: omega(x_s) = softplus(W_l x_s + b_l), learned per layer from the layer's
//                 normalised input; b starts at softplus^-1(freq_m) and W near 0, so training
//                 starts from RoPE's speeds (freq_m = theta^(-2m/d_h));
//   omega_mode 1: omega = table[token_s], drawn from the model's seed (uniform in [0, 2 freq_m],
//                 mean freq_m), shared by the layers, never trained and not a parameter: a
//                 checkpoint rebuilds it by constructing the model with the same seed.
// With constant increments omega_m = freq_m, phi_t = (t+1) freq_m: RoPE's angle plus one constant
// step, which cancels in every q.k, so the scores equal RoPE's exactly.
// The sum runs over the tokens of the call (positions are not read): a KV cache must carry the
// last phi as its running state and hand on from there.
// rotate_values: v_j is rotated by phi_j and the head output o_i by -phi_i, so
// o_i = sum_j a_ij R(phi_j - phi_i) v_j: a value arrives turned by the accumulated angle between
// source and receiver (the attention layer applies it; see rotatesValues()).
class AccumulatedRotation : public PositionalEncoding {
 public:
  std::vector<SettingSpec> settingSpecs() const override { return {kTheta, kFraction, kOmegaMode, kRotateValues}; }

  std::string configure(const ModelConfig& config, ParamStore& params) override {
    const Settings& s = config.positional_settings;
    const int dHead = config.headDim();
    pairs_ = static_cast<int>(std::lround(settingOr(s, kFraction) * dHead / 2.0));
    if (2 * pairs_ > dHead) return "accumulated_rotation needs an even head dimension (d_model / n_heads)";
    learned_ = settingOr(s, kOmegaMode) == 0;
    rotateValues_ = settingOr(s, kRotateValues) != 0;
    const double theta = settingOr(s, kTheta);
    freq_.resize(pairs_);
    for (int m = 0; m < pairs_; ++m) freq_[m] = std::pow(theta, -2.0 * m / dHead);
    weight_.clear();
    bias_.clear();
    if (learned_ && pairs_ > 0)
      for (int l = 0; l < config.n_layers; ++l) {
        const std::string prefix = "blocks." + std::to_string(l) + ".pos.omega.";
        weight_.push_back(&params.add(prefix + "weight", {pairs_, config.d_model}));
        bias_.push_back(&params.add(prefix + "bias", {pairs_}, false));
      }
    table_ = Mat::Zero(learned_ ? 0 : config.vocab, pairs_);
    return {};
  }

  void initialise(ParamStore&, Rng& rng) override {
    for (size_t l = 0; l < weight_.size(); ++l) {
      for (Eigen::Index i = 0; i < weight_[l]->value.size(); ++i) weight_[l]->value.data()[i] = rng.normal(0.f, 0.02f);
      for (int m = 0; m < pairs_; ++m) bias_[l]->value(0, m) = static_cast<float>(std::log(std::expm1(freq_[m])));
    }
    for (Eigen::Index v = 0; v < table_.rows(); ++v)
      for (int m = 0; m < pairs_; ++m) table_(v, m) = static_cast<float>(2.0 * freq_[m] * rng.uniform());
  }

  void copyFixedState(const PositionalEncoding& from) override {
    if (const auto* same = dynamic_cast<const AccumulatedRotation*>(&from)) table_ = same->table_;
  }

  int rotaryPairs() const override { return pairs_; }
  bool rotatesValues() const override { return rotateValues_; }
  bool rotaryAnglesNeedGradient() const override { return learned_; }
  bool accumulatesAngles() const override { return true; }

  void rotaryAngles(int layer, const Mat& x, const int* /*pos*/, int B, int T, Mat& angles) const override {
    tokenRotaryAngles(layer, x, nullptr, nullptr, B, T, angles);
  }

  void tokenRotaryAngles(int layer, const Mat& x, const int* tokens, const int*, int B, int T, Mat& angles) const override {
    if (learned_) {
      angles = (x * weight_[layer]->value.transpose()).rowwise() + bias_[layer]->value.row(0);  // z = W x + b
      for (Eigen::Index i = 0; i < angles.size(); ++i) angles.data()[i] = static_cast<float>(softplus(angles.data()[i]));
    } else {
      if (!tokens) throw std::invalid_argument("accumulated_rotation with omega_mode 1 needs the token ids");
      angles.resize(static_cast<Eigen::Index>(B) * T, pairs_);
      for (int i = 0; i < B * T; ++i) angles.row(i) = table_.row(tokens[i]);
    }
    // phi_t = sum_{s<=t} omega_s within each sequence (double running sum: long sequences stay exact)
    std::vector<double> running(pairs_);
    for (int b = 0; b < B; ++b) {
      std::fill(running.begin(), running.end(), 0.0);
      for (int t = 0; t < T; ++t) {
        float* row = angles.data() + (static_cast<size_t>(b) * T + t) * pairs_;
        for (int m = 0; m < pairs_; ++m) row[m] = static_cast<float>(running[m] += row[m]);
      }
    }
  }

  void rotaryAnglesBackward(int layer, const Mat& x, const Mat& dAngles, int B, int T, Mat& dx) const override {
    Param& w = *weight_[layer];
    Param& bias = *bias_[layer];
    // from phi_t = sum_{s<=t} omega_s: dOmega_s = sum_{t>=s} dPhi_t (reverse running sum)
    Mat dZ(dAngles.rows(), pairs_);
    std::vector<double> running(pairs_);
    for (int b = 0; b < B; ++b) {
      std::fill(running.begin(), running.end(), 0.0);
      for (int t = T - 1; t >= 0; --t) {
        const Eigen::Index row = static_cast<Eigen::Index>(b) * T + t;
        for (int m = 0; m < pairs_; ++m) dZ(row, m) = static_cast<float>(running[m] += dAngles(row, m));
      }
    }
    // from omega = softplus(z): dz = dOmega * sigmoid(z), z recomputed from x
    const Mat z = (x * w.value.transpose()).rowwise() + bias.value.row(0);
    for (Eigen::Index i = 0; i < dZ.size(); ++i) dZ.data()[i] *= static_cast<float>(sigmoid(z.data()[i]));
    // from z = x W^T + b
    w.grad.noalias() += dZ.transpose() * x;
    bias.grad.row(0) += dZ.colwise().sum();
    dx.noalias() += dZ * w.value;
  }

 private:
  int pairs_ = 0;
  bool learned_ = true, rotateValues_ = false;
  std::vector<double> freq_;
  std::vector<Param*> weight_, bias_;  // per layer (learned mode)
  Mat table_;                          // [vocab, pairs] fixed increments (random mode)
};

ATTNLAB_REGISTER(PositionalRegistry, "accumulated_rotation",
                 "rotate q,k pair m by phi_t = sum_{s<=t} omega_m(x_s), omega = softplus(W x_s + b) or random per token",
                 [] { return std::make_unique<AccumulatedRotation>(); });

}  // namespace
}  // namespace attnlab
