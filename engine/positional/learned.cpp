#include "positional/length_limit.h"
#include "positional/positional.h"

namespace attnlab {
namespace {

// Learned absolute positions: a table [context, d_model] added to the embeddings (GPT-2's wpe).
class LearnedAbsolute : public PositionalEncoding {
 public:
  std::string configure(const ModelConfig& config, ParamStore& params) override {
    table_ = &params.add("pos_emb.weight", {config.context, config.d_model});
    return {};
  }
  void initialise(ParamStore&, Rng& rng) override {
    for (int i = 0; i < table_->value.size(); ++i) table_->value.data()[i] = rng.normal(0.f, 0.02f);
  }
  bool absolute() const override { return true; }
  void addToEmbeddings(Mat& x, const int* pos, int B, int T) const override {
    for (int b = 0; b < B; ++b)
      for (int t = 0; t < T; ++t) x.row(b * T + t) += table_->value.row(pos[t]);
  }
  void embeddingsBackward(const Mat& dx, const int* pos, int B, int T, ParamStore&) const override {
    for (int b = 0; b < B; ++b)
      for (int t = 0; t < T; ++t) table_->grad.row(pos[t]) += dx.row(b * T + t);  // from x += table[pos]
  }

 private:
  Param* table_ = nullptr;
};

// Row t exists only for t < context: the model refuses longer sequences (positional/length_limit.h).
static const bool kLimitedToContext = declarePositionLimited("learned");

ATTNLAB_REGISTER(PositionalRegistry, "learned", "x_t += P[t], a learned table of context x d_model",
                 [] { return std::make_unique<LearnedAbsolute>(); });

}  // namespace
}  // namespace attnlab
