#include <cmath>

#include "positional/positional.h"

namespace attnlab {
namespace {

// P4: rotate pair m of q and k by pos * theta^(-2m/d_head). Only the first
// rotary_fraction of the pairs rotate; ntk_scale stretches the base for longer contexts.
class Rope : public PositionalEncoding {
 public:
  std::vector<SettingSpec> settingSpecs() const override {
    return {{"theta", 10000.0, 2.0, 1e9, false, "base of the rotation frequencies"},
            {"rotary_fraction", 1.0, 0.0, 1.0, false, "share of each head's dimensions that rotate"},
            {"ntk_scale", 1.0, 1.0, 1024.0, false, "NTK-aware base scaling factor for longer contexts"}};
  }
  std::string configure(const ModelConfig& config, ParamStore&) override {
    const auto specs = settingSpecs();
    const int dHead = config.headDim();
    pairs_ = static_cast<int>(std::lround(settingOr(config.positional_settings, specs[1]) * dHead / 2.0));
    double theta = settingOr(config.positional_settings, specs[0]);
    const double ntk = settingOr(config.positional_settings, specs[2]);
    if (dHead > 2) theta *= std::pow(ntk, static_cast<double>(dHead) / (dHead - 2));
    freq_.resize(pairs_);
    for (int m = 0; m < pairs_; ++m) freq_[m] = std::pow(theta, -2.0 * m / dHead);
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
  int pairs_ = 0;
  std::vector<double> freq_;
};

ATTNLAB_REGISTER(PositionalRegistry, "rope", "rotate q,k pair m by t*theta^(-2m/d_h); q.k depends on i-j only",
                 [] { return std::make_unique<Rope>(); });

}  // namespace
}  // namespace attnlab
