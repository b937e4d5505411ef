#include "forward_pass.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace attnlab {

namespace {

std::string number(double x, int digits = 4) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, x);
  return buffer;
}

}  // namespace

ForwardPass explainHead(const HeadTrace& h, const std::string& variant, int query) {
  const int T = int(h.weights.rows());
  if (query < 0 || query >= T) throw std::out_of_range("explainHead: no position " + std::to_string(query));
  ForwardPass f;
  f.query = query;
  f.variant = variant;
  f.dHead = int(h.q.cols());
  for (int c = 0; c < f.dHead; ++c) f.q.push_back(h.q(query, c));
  f.visible.assign(T, false);
  const double scale = 1.0 / std::sqrt(double(f.dHead));
  for (int j = 0; j < T; ++j) {
    if (!std::isfinite(h.scores(query, j))) continue;
    f.visible[j] = true;
    f.keys.push_back(j);
    std::vector<float> kj(f.dHead), vj(f.dHead);
    double dot = 0;
    for (int c = 0; c < f.dHead; ++c) {
      kj[c] = h.k(j, c);
      vj[c] = h.v(j, c);
      dot += double(f.q[c]) * kj[c];
    }
    f.k.push_back(std::move(kj));
    f.v.push_back(std::move(vj));
    f.dot.push_back(dot);
    f.scaled.push_back(dot * scale);
    f.score.push_back(h.scores(query, j));
    f.bias.push_back(f.score.back() - f.scaled.back());
    f.weight.push_back(h.weights(query, j));
  }
  // The normalisation, recomputed from the scores for the variants that are a plain function of them.
  const bool softmaxLike = variant == "softmax" || variant == "window";
  if (softmaxLike && !f.score.empty()) {
    f.normalisation = "softmax";
    f.maxScore = f.score[0];
    for (double s : f.score) f.maxScore = std::max(f.maxScore, s);
    for (double s : f.score) f.expSum += std::exp(s - f.maxScore);
    for (double s : f.score) f.recomputed.push_back(std::exp(s - f.maxScore) / f.expSum);
  } else if (variant == "sigmoid") {
    f.normalisation = "sigmoid";
    for (double s : f.score) f.recomputed.push_back(1.0 / (1.0 + std::exp(-s)));
  } else if (variant == "linear" && !f.score.empty()) {  // the scores are m_ij = phi(q_i).phi(k_j), all positive
    f.normalisation = "linear";
    std::fill(f.bias.begin(), f.bias.end(), 0.0);  // the kernel adds no bias: the score is not q.k/sqrt(d) plus something
    for (double s : f.score) f.expSum += s;
    for (double s : f.score) f.recomputed.push_back(s / f.expSum);
  } else if (variant == "oattention" && int(h.presence.size()) == T && !f.score.empty()) {
    // a_ij = p_j exp(s_ij - max) / sum_j' p_j' exp(s_ij' - max): absent keys (p = 0) get exactly 0
    f.normalisation = "presence";
    f.queryPresence = h.presence[query];
    f.maxScore = f.score[0];
    for (double s : f.score) f.maxScore = std::max(f.maxScore, s);
    for (size_t j = 0; j < f.keys.size(); ++j) {
      f.presence.push_back(h.presence[f.keys[j]]);
      f.expSum += f.presence[j] * std::exp(f.score[j] - f.maxScore);
    }
    for (size_t j = 0; j < f.keys.size(); ++j)
      f.recomputed.push_back(f.expSum > 0 ? f.presence[j] * std::exp(f.score[j] - f.maxScore) / f.expSum : 0.0);
  } else {
    f.normalisation = variant;
  }
  f.output.assign(f.dHead, 0.0);
  for (size_t j = 0; j < f.keys.size(); ++j) {
    f.weightSum += f.weight[j];
    for (int c = 0; c < f.dHead; ++c) f.output[c] += f.weight[j] * f.v[j][c];
  }
  for (double& o : f.output) o *= f.queryPresence;
  return f;
}

std::string explainScore(const ForwardPass& f, size_t j) {
  if (f.normalisation == "linear")  // the kernel's score: no q.k/sqrt(d), no bias
    return "m(" + std::to_string(f.query + 1) + ", " + std::to_string(f.keys[j] + 1) + ") = \u03c6(q)\u00b7\u03c6(k), \u03c6(x) = elu(x) + 1 (x + 1 for x > 0, e^x below)\n= " +
           number(f.score[j]) + " (the trace's score)\nq\u00b7k / \u221a" + std::to_string(f.dHead) + " = " + number(f.scaled[j]) + " is not used";
  std::string s = "score(" + std::to_string(f.query + 1) + ", " + std::to_string(f.keys[j] + 1) + ") = q\u00b7k / \u221a" +
                  std::to_string(f.dHead) + " + bias\n= " + number(f.dot[j]) + " / " + number(std::sqrt(double(f.dHead)), 3) +
                  " + " + number(f.bias[j]) + "\n= " + number(f.scaled[j]) + " + " + number(f.bias[j]) + " = " + number(f.score[j]);
  s += "\nq\u00b7k = \u03a3_c q_c k_c = ";
  for (int c = 0; c < std::min(f.dHead, 3); ++c) s += (c ? " + " : "") + number(f.q[c], 3) + "\u00b7" + number(f.k[j][c], 3);
  if (f.dHead > 3) s += " + \u2026 (" + std::to_string(f.dHead) + " terms)";
  return s;
}

std::string explainWeight(const ForwardPass& f, size_t j) {
  const std::string at = "a(" + std::to_string(f.query + 1) + ", " + std::to_string(f.keys[j] + 1) + ")";
  if (f.normalisation == "softmax")
    return at + " = exp(score \u2212 max) / \u03a3 exp(score' \u2212 max)\n= exp(" + number(f.score[j]) + " \u2212 " + number(f.maxScore) +
           ") / " + number(f.expSum) + "\n= " + number(std::exp(f.score[j] - f.maxScore)) + " / " + number(f.expSum) + " = " +
           number(f.recomputed[j]) + "\nthe trace's weight: " + number(f.weight[j]);
  if (f.normalisation == "sigmoid")
    return at + " = 1 / (1 + exp(\u2212score)) = 1 / (1 + exp(" + number(-f.score[j]) + ")) = " + number(f.recomputed[j]) +
           "\nthe trace's weight: " + number(f.weight[j]);
  if (f.normalisation == "linear")
    return at + " = m / \u03a3 m' with m = \u03c6(q)\u00b7\u03c6(k), \u03c6 = elu + 1\n= " + number(f.score[j]) + " / " + number(f.expSum) +
           " = " + number(f.recomputed[j]) + "\nthe trace's weight: " + number(f.weight[j]);
  if (f.normalisation == "presence")
    return at + " = p_k exp(score \u2212 max) / \u03a3 p exp(score' \u2212 max)\n= " + number(f.presence[j]) + " \u00b7 exp(" +
           number(f.score[j]) + " \u2212 " + number(f.maxScore) + ") / " + number(f.expSum) + " = " + number(f.recomputed[j]) +
           "\nthe trace's weight: " + number(f.weight[j]) + "\n(p = presence of the key's token, \u2016h\u2016\u00b2 / (\u03c4 + \u2016h\u2016\u00b2))";
  return at + " = " + number(f.weight[j]) + " (as the " + f.variant + " variant normalises; from the trace)";
}

std::string explainOutput(const ForwardPass& f, int c) {
  std::string s = "o_" + std::to_string(c + 1) + " = \u03a3_j a_j v_j," + std::to_string(c + 1) + " = ";
  for (size_t j = 0; j < f.keys.size() && j < 4; ++j) s += (j ? " + " : "") + number(f.weight[j], 3) + "\u00b7" + number(f.v[j][c], 3);
  if (f.keys.size() > 4) s += " + \u2026 (" + std::to_string(f.keys.size()) + " keys)";
  if (f.normalisation == "presence") s = "p_q \u00b7 (" + s + ")\np_q = " + number(f.queryPresence, 4) + ", the query's presence";
  return s + "\n= " + number(f.output[c]);
}

}  // namespace attnlab
