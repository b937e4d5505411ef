#pragma once
// Joint query-key embedding (AttentionViz-style) of one head: its queries and keys from many
// positions and sequences in one 3D space, as a plain struct a 3D view can draw.
// Normalisation keeps every query's ranking of keys (so the softmax) unchanged:
//   queries q' = q / rms|q|                  (a common scale);
//   keys    k' = mean(q') + c (k - mean(k))  (a per-query constant shift and a common scale),
// with c chosen so that rms|k'| = rms|q'| = 1: key mean meets query mean, norms alike.
#include <array>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "tokenizer/vocabulary.h"
#include "model/model.h"

namespace attnlab {

struct EmbeddedPoint {
  double x = 0, y = 0, z = 0;
  bool query = true;  // else a key
  int token = 0;
  std::string label;
  int position = 0;
  int sequence = 0;
};

struct QkEmbedding {
  int layer = 0, head = 0;
  std::vector<EmbeddedPoint> points;  // of the normalised sets
  std::array<double, 3> explained{};  // share of the joint variance on each axis
  double query_scale = 1, key_scale = 1;
  // Pearson correlation between q.k and the 3D distance of q and k, over every visible pair
  // (j <= i in one sequence): without and with the normalisation. Strongly negative means the
  // picture can be read as "close = attends".
  double correlation_raw = 0, correlation_normalised = 0;
};

// Queries and keys after positional rotation, from one forward per sequence.
QkEmbedding qkEmbedding(const Model& model, const Vocabulary& vocabulary, const std::vector<std::vector<int>>& sequences, int layer,
                        int head);

// The rows of `points` projected on their 3 principal axes (columns padded with 0 below 3
// dimensions); `explained`, when given, receives each axis's share of the variance.
Eigen::MatrixXd pca3(const Eigen::MatrixXd& points, std::array<double, 3>* explained = nullptr);
// Pearson correlation of two equally long lists (0 when either is constant).
double pearson(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace attnlab
