#include <algorithm>
#include <limits>

#include "attention/attention.h"
#include "attention/content_free.h"
#include "attention/head_loops.h"

namespace attnlab {
namespace {

// Deconstructed attention, no mixing: a_ij = delta_ij, so o_i = v_i and no token reads
// any other: what is left of a Transformer when attention moves no information between positions
// (the deconstructed-attention paper's lower bound). As softmax over the single visible key, the weight is 1 unless the
// key gate is exactly 0 (an absent source), and the gate gets no gradient.
class NoMixingAttention : public AttentionVariant {
 public:
  std::string configure(const ModelConfig&, const std::string&, ParamStore&) override { return {}; }
  bool usesDotScores() const override { return false; }

  void forward(const AttentionInputs& in, AttentionOutputs& out) const override {
    forEachHead(in.shape, [&](const HeadSlices& h) {
      auto S = h.map(out.scores);
      auto A = h.map(out.weights);
      S.setConstant(-std::numeric_limits<float>::infinity());
      A.setZero();
      const float* gate = h.keyGate(in.key_gate);
      for (int i = 0; i < in.shape.T; ++i) {
        S(i, i) = 0.0f;
        A(i, i) = gate && gate[i] == 0.0f ? 0.0f : 1.0f;  // a_ij = delta_ij
      }
      h.out(out.o) = A.diagonal().asDiagonal() * h.v(in.v);  // o_i = a_ii v_i
    });
  }

  bool decodeRow(const DecodeRowInputs& in, float* o, float* weights) const override {
    std::fill(o, o + in.dHead, 0.0f);
    for (int j = 0; j < in.n; ++j) {
      weights[j] = in.key_positions[j] == in.query_position && !(in.key_gate && in.key_gate[j] == 0.0f) ? 1.0f : 0.0f;
      if (weights[j] != 0.0f) std::copy(in.v + static_cast<size_t>(j) * in.dHead, in.v + static_cast<size_t>(j + 1) * in.dHead, o);
    }
    return true;
  }

  void backward(const AttentionInputs& in, const AttentionOutputs& saved, AttentionGrads& g) override {
    forEachKvGroup(in.shape, [&](const HeadSlices& h, bool firstInGroup) {
      auto dV = h.kvOut(g.d_v);
      if (firstInGroup) {
        h.kvOut(g.d_k).setZero();
        dV.setZero();
      }
      h.out(g.d_q).setZero();
      const ConstHeadMat A = h.map(static_cast<const float*>(saved.weights));
      const ConstHeadMat dO(g.d_o + h.qOffset(), in.shape.T, in.shape.dHead);
      dV += A.diagonal().asDiagonal() * dO;  // from o_i = a_ii v_i
      if (float* dGate = h.keyGate(g.d_key_gate)) std::fill(dGate, dGate + in.shape.T, 0.0f);
    });
  }
};

ATTNLAB_REGISTER(AttentionRegistry, "no_mixing", "a_ij = delta_ij: o_i = v_i, no token reads another",
                 [] { return std::make_unique<NoMixingAttention>(); });
static const bool kContentFree = declareContentFree("no_mixing");

}  // namespace
}  // namespace attnlab
