#pragma once
// Attention against attribution: for the predicted token at the last position, each input token's
// gradient x input, a_t = x_t . d log p(token) / d x_t with x_t the residual entering block 0
// (embedding plus any absolute position), beside the last layer's head-mean attention row and the
// attention rollout row of that position, and how well each map orders the tokens like the
// attribution: Kendall's tau-b between |a_t| and the map.
#include <vector>

#include "model/model.h"

namespace attnlab {

struct InputAttribution {
  int token = -1;                    // the explained token (the prediction at the last position)
  std::vector<double> grad_x_input;  // [T]
  std::vector<double> attention;     // [T] last layer, mean over heads, last query row
  std::vector<double> rollout;       // [T] last row of the rollout
  double tau_attention = 0, tau_rollout = 0;
};

// `token` -1: the model's top prediction. Throws std::invalid_argument on a bad prompt or token.
InputAttribution inputAttribution(const Model& model, const std::vector<int>& tokens, int token = -1);

// Kendall's tau-b of two equally long lists (ties counted as in tau-b); 0 when either is constant.
double kendallTau(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace attnlab
