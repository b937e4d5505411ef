#include <cmath>

#include "positional/positional.h"

namespace attnlab {
namespace {

// Sinusoidal positions: fixed sinusoids added to the embeddings (Vaswani et al.).
class Sinusoidal : public PositionalEncoding {
 public:
  std::string configure(const ModelConfig& config, ParamStore&) override {
    d_ = config.d_model;
    return {};
  }
  bool absolute() const override { return true; }
  void addToEmbeddings(Mat& x, const int* pos, int B, int T) const override {
    for (int t = 0; t < T; ++t) {
      RowVec row(d_);
      for (int c = 0; c < d_; ++c) {
        const double freq = std::pow(10000.0, -static_cast<double>(c - c % 2) / d_);
        row[c] = static_cast<float>(c % 2 == 0 ? std::sin(pos[t] * freq) : std::cos(pos[t] * freq));
      }
      for (int b = 0; b < B; ++b) x.row(b * T + t) += row;
    }
  }

 private:
  int d_ = 0;
};

ATTNLAB_REGISTER(PositionalRegistry, "sinusoidal", "x_t += [sin(t w_c), cos(t w_c)], w_c = 10000^(-2c/d)",
                 [] { return std::make_unique<Sinusoidal>(); });

}  // namespace
}  // namespace attnlab
