#include "predictions.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace attnlab::cli {

std::vector<double> softmax(const float* logits, int n, double temperature) {
  std::vector<double> p(n);
  const double peak = *std::max_element(logits, logits + n);  // subtracted so exp never overflows
  double sum = 0;
  for (int i = 0; i < n; ++i) sum += p[i] = std::exp((logits[i] - peak) / temperature);
  for (double& v : p) v /= sum;
  return p;
}

std::vector<int> topK(const std::vector<double>& values, int k) {
  std::vector<int> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  k = std::min<int>(k, order.size());
  std::partial_sort(order.begin(), order.begin() + k, order.end(),
                    [&](int a, int b) { return values[a] > values[b] || (values[a] == values[b] && a < b); });
  order.resize(k);
  return order;
}

int sampleIndex(const std::vector<double>& probabilities, Rng& rng) {
  double u = rng.uniform();
  for (size_t i = 0; i < probabilities.size(); ++i) {
    u -= probabilities[i];
    if (u < 0) return static_cast<int>(i);
  }
  return static_cast<int>(probabilities.size()) - 1;  // u fell in the rounding slack at the top
}

}  // namespace attnlab::cli
