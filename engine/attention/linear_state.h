#pragma once
// Linear attention's recurrent, constant-size form for decoding one token at a time. Per head it keeps
//   S = sum_j g_j phi(k_j) v_j^T   [d_head x d_head]  and  z = sum_j g_j phi(k_j)   [d_head]
// in place of a KV cache, and answers a query with o = phi(q)^T S / phi(q)^T z. After adding tokens
// 0..t, reading query t gives exactly row t of the parallel form in linear.cpp (up to float
// summation order). The state depends on keys and values only, so the query heads of a GQA group
// may share one state when no key gate is used.
#include <cmath>
#include <cstddef>

#include "attention/recurrent_state.h"
#include "core/tensor.h"

namespace attnlab {

// phi(x) = elu(x) + 1: positive everywhere, so every weight and the normaliser are positive.
inline float eluPlusOne(float x) { return x > 0 ? x + 1.0f : std::exp(x); }

class LinearAttentionState : public RecurrentState {
 public:
  explicit LinearAttentionState(int dHead) : S_(Mat::Zero(dHead, dHead)), z_(RowVec::Zero(dHead)) {}

  void reset() override {
    S_.setZero();
    z_.setZero();
  }
  // Adds one token's key and value, weighted by its key gate g (1 without a gate).
  void add(const float* k, const float* v, float gate = 1.0f) {
    const RowVec phiK = gate * phi(k);
    S_.noalias() += phiK.transpose() * ConstMatMap(v, 1, dHead());
    z_ += phiK;
  }
  // o = phi(q)^T S / phi(q)^T z; all zeros while the state is empty.
  void read(const float* q, float* o) const {
    const RowVec phiQ = phi(q);
    const float norm = phiQ.dot(z_);
    MatMap out(o, 1, dHead());
    if (norm > 0) out.noalias() = (phiQ * S_) / norm;
    else out.setZero();
  }
  // add, then read: the output of the token just added.
  void step(const float* q, const float* k, const float* v, float* o, float gate = 1.0f) override {
    add(k, v, gate);
    read(q, o);
  }

  int dHead() const { return static_cast<int>(z_.size()); }
  size_t bytes() const override { return sizeof(float) * static_cast<size_t>(S_.size() + z_.size()); }

 private:
  RowVec phi(const float* x) const { return ConstMatMap(x, 1, dHead()).unaryExpr([](float v) { return eluPlusOne(v); }); }

  Mat S_;
  RowVec z_;
};

}  // namespace attnlab
