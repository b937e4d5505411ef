#include <cmath>
#include <numbers>

#include "positional/positional.h"

namespace attnlab {
namespace {

// RoPE: rotate pair m of q and k by pos * theta^(-2m/d_head). Only the first rotary_fraction of the
// pairs rotate; ntk_scale stretches the base for longer contexts. The settings after those are the
// frequency rules of pretrained models: frequencies spread over the rotated dimensions rather than
// the head's (GPT-NeoX's partial rotary), positions divided by linear_scale (rope_scaling
// "linear"), and Llama 3's band-wise scaling (rope_scaling "llama3", on when llama3_factor > 0).
class Rope : public PositionalEncoding {
 public:
  std::vector<SettingSpec> settingSpecs() const override {
    return {{"theta", 10000.0, 2.0, 1e9, false, "base of the rotation frequencies"},
            {"rotary_fraction", 1.0, 0.0, 1.0, false, "share of each head's dimensions that rotate"},
            {"ntk_scale", 1.0, 1.0, 1024.0, false, "NTK-aware base scaling factor for longer contexts"},
            {"span_rotary_only", 0.0, 0.0, 1.0, true, "1: exponents 2m over the rotated dimensions, not d_head (GPT-NeoX)"},
            {"linear_scale", 1.0, 1.0, 1024.0, false, "positions divided by this factor (linear rope scaling)"},
            {"llama3_factor", 0.0, 0.0, 1024.0, false, "Llama 3 scaling: long wavelengths divided by this (0: off)"},
            {"llama3_low_freq_factor", 1.0, 0.001, 1024.0, false, "Llama 3 scaling: wavelengths above context/this are scaled"},
            {"llama3_high_freq_factor", 4.0, 0.001, 1024.0, false, "Llama 3 scaling: wavelengths below context/this are kept"},
            {"llama3_original_context", 8192.0, 1.0, 1e9, true, "Llama 3 scaling: the context the model was trained at"}};
  }
  std::string configure(const ModelConfig& config, ParamStore&) override {
    const auto specs = settingSpecs();
    auto setting = [&](int i) { return settingOr(config.positional_settings, specs[i]); };
    const int dHead = config.headDim();
    pairs_ = static_cast<int>(std::lround(setting(1) * dHead / 2.0));
    double theta = setting(0);
    if (dHead > 2) theta *= std::pow(setting(2), static_cast<double>(dHead) / (dHead - 2));
    const int span = setting(3) > 0 ? 2 * pairs_ : dHead;
    freq_.resize(pairs_);
    for (int m = 0; m < pairs_; ++m) freq_[m] = std::pow(theta, -2.0 * m / span) / setting(4);
    if (setting(5) > 0) {
      const double low = setting(6), high = setting(7);
      if (!(high > low)) return "rope llama3_high_freq_factor must exceed llama3_low_freq_factor";
      for (double& f : freq_) f = llama3Scaled(f, setting(5), low, high, setting(8));
    }
    return {};
  }
  int rotaryPairs() const override { return pairs_; }
  void rotaryAngles(int, const Mat&, const int* pos, int B, int T, Mat& angles) const override {
    angles.resize(static_cast<Eigen::Index>(B) * T, pairs_);
    for (int b = 0; b < B; ++b)
      for (int t = 0; t < T; ++t)
        for (int m = 0; m < pairs_; ++m) angles(b * T + t, m) = static_cast<float>(pos[t] * freq_[m]);
  }

 private:
  // Wavelengths shorter than context/high stay; longer than context/low are divided by `factor`;
  // in between, a blend whose weight on the unscaled frequency rises linearly in context/wavelength.
  static double llama3Scaled(double freq, double factor, double low, double high, double context) {
    const double wavelength = 2 * std::numbers::pi / freq;
    if (wavelength < context / high) return freq;
    if (wavelength > context / low) return freq / factor;
    const double smooth = (context / wavelength - low) / (high - low);
    return (1 - smooth) * freq / factor + smooth * freq;
  }

  int pairs_ = 0;
  std::vector<double> freq_;
};

ATTNLAB_REGISTER(PositionalRegistry, "rope", "rotate q,k pair m by t*theta^(-2m/d_h); q.k depends on i-j only",
                 [] { return std::make_unique<Rope>(); });

}  // namespace
}  // namespace attnlab
