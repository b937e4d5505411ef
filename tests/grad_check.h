#pragma once
// Finite-difference gradient check of every parameter tensor of a Model, shared by the tests.
#include <QtTest>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "model_support.h"

namespace attnlab::testing {

// The shape the gradient checks share: small enough for finite differences over every parameter.
inline ModelConfig gradCheckConfig(const std::string& attention, const std::string& positional) {
  ModelConfig c;
  c.vocab = 7;
  c.d_model = 8;
  c.n_layers = 2;
  c.n_heads = 2;
  c.d_ff = 12;
  c.context = 8;
  c.attention = {attention};
  c.positional = positional;
  return c;
}

struct GradCheckCase {
  std::vector<int> tokens, targets;
  int B = 2, T = 0;
  bool keep_attention_maps = true;  // false: variants that can attend without maps do, as in training
};

inline GradCheckCase randomCase(const ModelConfig& c, int B, int T, uint64_t seed) {
  Rng rng(seed);
  GradCheckCase k;
  k.B = B;
  k.T = T;
  for (int i = 0; i < B * T; ++i) {
    k.tokens.push_back(rng.uniformInt(0, c.vocab - 1));
    k.targets.push_back(i % 5 == 3 ? -1 : rng.uniformInt(0, c.vocab - 1));  // some positions unscored
  }
  return k;
}

inline std::vector<float> randomVector(size_t n, Rng& rng, float lo, float hi) {
  std::vector<float> x(n);
  for (float& v : x) v = lo + static_cast<float>(rng.uniform()) * (hi - lo);
  return x;
}

// Relative error sqrt(sum (numeric - analytic)^2 / sum (numeric^2 + analytic^2)) between `analytic`
// and differences of `loss` in each entry of x: central, or one-sided upwards where x is 0 and
// `oneSidedAtZero` (a presence cannot go negative). An all-zero gradient gives 1: nothing was checked.
inline double relativeError(std::vector<float>& x, const std::vector<float>& analytic, const std::function<double()>& loss,
                            bool oneSidedAtZero = false) {
  const float eps = 1e-3f;
  double diff = 0, norm = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const float saved = x[i];
    const bool oneSided = oneSidedAtZero && saved == 0.0f;
    x[i] = saved + eps;
    const double up = loss();
    x[i] = oneSided ? saved : saved - eps;
    const double down = loss();
    x[i] = saved;
    const double numeric = (up - down) / (oneSided ? eps : 2 * eps);
    diff += (numeric - analytic[i]) * (numeric - analytic[i]);
    norm += numeric * numeric + analytic[i] * analytic[i];
  }
  return norm > 0 ? std::sqrt(diff / norm) : 1.0;
}

// Compares the analytic gradient of each tensor with central differences over (at most
// `maxPerTensor`) entries. Fails the QtTest with the tensor's name and its relative error, or with
// the first entry whose difference exceeds kEntryAbsolute + kEntryRelative x its size.
// The bounds come from the float32 noise measured over every case of the gradient suites (3,851
// tensors, 2026-12-01): tensor-level relative errors had a median of about 1e-4 and a worst of
// 6.7e-3 (a value-gated W_k; most above 1e-3 are parameters behind a sigmoid or an exponential),
// hence the tolerance of 1e-2; single entries of near-zero gradient differed by up to 7.6e-4
// (multi_token with ALiBi and grouped heads, an embedding row). A wrong backward line typically gives tensor errors of 0.1 to 1 and
// entries off by their whole size.
// `unread(name)` names tensors the model does not read (W_q, W_k of content-free variants): their
// gradient must then be exactly zero, where any other tensor's must not.
// `invariant(name)` names tensors the loss does not depend on although the model reads them (a key
// bias shifts every score of a query equally, and softmax ignores that): analytic and numeric
// gradients must then both be zero up to float noise.
constexpr double kEntryAbsolute = 1e-3, kEntryRelative = 0.1;

inline void checkGradients(Model& model, const GradCheckCase& k, const std::string& label, double tolerance = 1e-2,
                           int maxPerTensor = 40, const std::function<bool(const std::string&)>& unread = {},
                           const std::function<bool(const std::string&)>& invariant = {}) {
  auto ws = makeWorkspace();
  ws->keep_attention_maps = k.keep_attention_maps;
  model.params().zeroGrad();
  model.forward(*ws, k.tokens.data(), k.targets.data(), k.B, k.T);
  model.backward(*ws);
  const float eps = 3e-3f;  // small enough that truncation error stays below float32 noise
  for (auto& p : model.params().all()) {
    double diff = 0, norm = 0;
    const Eigen::Index n = p->value.size();
    const Eigen::Index stride = std::max<Eigen::Index>(1, n / maxPerTensor);
    for (Eigen::Index i = 0; i < n; i += stride) {
      float& w = p->value.data()[i];
      const float saved = w;
      w = saved + eps;
      const double up = model.forward(*ws, k.tokens.data(), k.targets.data(), k.B, k.T);
      w = saved - eps;
      const double down = model.forward(*ws, k.tokens.data(), k.targets.data(), k.B, k.T);
      w = saved;
      const double numeric = (up - down) / (2 * eps);
      const double analytic = p->grad.data()[i];
      diff += (numeric - analytic) * (numeric - analytic);
      norm += numeric * numeric + analytic * analytic;
      if (std::abs(numeric - analytic) > kEntryAbsolute + kEntryRelative * std::max(std::abs(numeric), std::abs(analytic)) &&
          !(invariant && invariant(p->name)))
        QFAIL(qPrintable(QString::fromStdString(label + ": gradient of " + p->name + " entry " + std::to_string(i) + " is ") +
                         QString::number(analytic) + ", finite differences give " + QString::number(numeric)));
    }
    if (invariant && invariant(p->name)) {
      if (!(p->grad.cwiseAbs().maxCoeff() < 1e-5f && norm < 1e-6))
        QFAIL(qPrintable(QString::fromStdString(label + ": " + p->name + " cannot change the loss, yet has a gradient")));
      continue;
    }
    const double rel = norm > 0 ? std::sqrt(diff / norm) : 0.0;
    if (!(rel < tolerance))
      QFAIL(qPrintable(QString::fromStdString(label + ": gradient of " + p->name + " differs from finite differences, relative error ") +
                       QString::number(rel)));
    if (unread && unread(p->name)) {
      if (!p->grad.isZero(0))
        QFAIL(qPrintable(QString::fromStdString(label + ": " + p->name + " is not read, yet has a gradient")));
      continue;
    }
    // A tensor whose gradient is identically zero would pass vacuously: require signal.
    if (!(norm > 1e-12))
      QFAIL(qPrintable(QString::fromStdString(label + ": gradient of " + p->name + " is zero everywhere checked")));
  }
}

}  // namespace attnlab::testing
