#include <algorithm>
#include <vector>

#include "attention/attention.h"
#include "attention/content_free.h"
#include "attention/softmax_core.h"

namespace attnlab {
namespace {

// Deconstructed attention, static map: a_ij = softmax_j(B_{h, i-j} + log g_j) over j <= i, o_i = sum_j
// a_ij v_j. B is a learned table per head and distance ("blocks.{l}.attn.static_map", [H, context],
// initial 0: a running mean); distances at or past the context share the last entry. Queries and keys
// take no part, so the map is the same for every input (the deconstructed-attention paper asks how much
// of attention is only that) and positional encodings do not apply: B already is the position.
class StaticMapAttention : public AttentionVariant {
 public:
  std::string configure(const ModelConfig& config, const std::string& prefix, ParamStore& params) override {
    distances_ = config.context;
    table_ = &params.add(prefix + "static_map", {config.n_heads, config.context}, false);
    return {};
  }
  bool usesDotScores() const override { return false; }

  void forward(const AttentionInputs& in, AttentionOutputs& out) const override {
    forEachHead(in.shape, [&](const HeadSlices& h) {
      auto S = h.map(out.scores);
      const int T = in.shape.T;
      for (int i = 0; i < T; ++i)
        for (int j = 0; j < T; ++j) S(i, j) = j <= i ? roundTo(in.precision, logit(h.h, i - j)) : -std::numeric_limits<float>::infinity();
      maskedSoftmaxHead(S, h.map(out.weights), 1.0f, h.keyGate(in.key_gate), 0, in.precision);
      causalWeightedValues(h.map(static_cast<const float*>(out.weights)), h.v(in.v), h.out(out.o));  // O = A V
    });
  }

  bool decodeRow(const DecodeRowInputs& in, float* o, float* weights) const override {
    std::vector<float> bias(in.n);
    for (int j = 0; j < in.n; ++j) bias[j] = logit(in.head, in.query_position - in.key_positions[j]);
    DecodeRowInputs row = in;
    row.bias = bias.data();
    row.scale = 0.0f;  // s_j = 0 q.k_j + B_{h, i-j}
    softmaxDecodeRow(row, 1.0f, 0, o, weights);
    return true;
  }

  void backward(const AttentionInputs& in, const AttentionOutputs& saved, AttentionGrads& g) override {
    const AttentionShape& s = in.shape;
    const int T = s.T;
    std::vector<std::vector<double>> dTable(static_cast<size_t>(s.B) * s.H, std::vector<double>(distances_, 0.0));
    forEachKvGroup(s, [&](const HeadSlices& h, bool firstInGroup) {
      auto dV = h.kvOut(g.d_v);
      if (firstInGroup) {
        h.kvOut(g.d_k).setZero();  // keys take no part in the map
        dV.setZero();
      }
      h.out(g.d_q).setZero();  // nor do queries
      const ConstHeadMat A = h.map(static_cast<const float*>(saved.weights));
      const ConstHeadMat dO(g.d_o + h.qOffset(), T, s.dHead);
      dV.noalias() += A.transpose() * dO;                          // from O = A V
      const Mat dA = dO * h.v(in.v).transpose();                  // from O = A V
      const auto rowDot = (A.array() * dA.array()).rowwise().sum().eval();
      const Mat dZ = (A.array() * (dA.array().colwise() - rowDot)).matrix();  // from a = softmax(z)
      std::vector<double>& dB = dTable[static_cast<size_t>(h.b) * s.H + h.h];
      for (int i = 0; i < T; ++i)
        for (int j = 0; j <= i; ++j) dB[std::min(i - j, distances_ - 1)] += dZ(i, j);  // from z_ij = B_{h, i-j}
      if (g.d_key_gate) {  // from z = ... + log g_j
        const float* gate = h.keyGate(in.key_gate);
        float* dGate = h.keyGate(g.d_key_gate);
        const auto colSum = dZ.colwise().sum().eval();
        for (int j = 0; j < T; ++j) dGate[j] = colSum[j] / gate[j];
      }
    });
    for (int b = 0; b < s.B; ++b)
      for (int h = 0; h < s.H; ++h)
        for (int d = 0; d < distances_; ++d) table_->grad(h, d) += static_cast<float>(dTable[static_cast<size_t>(b) * s.H + h][d]);
  }

 private:
  float logit(int head, int distance) const { return table_->value(head, std::min(distance, distances_ - 1)); }

  int distances_ = 1;
  Param* table_ = nullptr;
};

ATTNLAB_REGISTER(AttentionRegistry, "static_map", "a_ij = softmax_j(B_{h,i-j}), a learned map per head independent of content",
                 [] { return std::make_unique<StaticMapAttention>(); });
static const bool kContentFree = declareContentFree("static_map");

}  // namespace
}  // namespace attnlab
