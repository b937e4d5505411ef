#pragma once
// Direct logit attribution: the final residual is a sum of what each part wrote into it,
//   x = embed + sum_{l,h} W_O^{l,h} z^{l,h} + sum_l b_O^l + sum_l (mlp_l - b_l) + sum_l b_l,
// whether the blocks are sequential or parallel (GPT-NeoX: attention and MLP both read the block
// input, and both outputs add to the stream). With the final norm's scale frozen at its value on x
// (rstd of x) the logit of token v is linear in x: LayerNorm gives rstd * (w * centre(x)) . u_v +
// b_f . u_v, RMSNorm rstd * (w * x) . u_v. Each term's direct contribution is that map applied to
// it; the contributions plus the bias terms sum to the logit. Bias terms appear where the model has
// the bias (attention output, MLP output, final norm).
#include <string>
#include <vector>

#include "model/model.h"

namespace attnlab {

struct DlaTerm {
  std::string name;  // "embed", "L1H3" (head), "attn 1 bias", "mlp 1", "mlp 1 bias", "ln_f bias"
  int layer = -1, head = -1;
  double value = 0;
};

struct DirectLogitAttribution {
  int token = -1, position = -1;
  double logit = 0;  // the model's logit
  double sum = 0;    // the sum of the terms, in float64
  std::vector<DlaTerm> terms;
};

// `token` -1: the model's top prediction at `position` (-1: the last position). Throws
// std::invalid_argument on a bad prompt, token or position.
DirectLogitAttribution directLogitAttribution(const Model& model, const std::vector<int>& tokens, int token = -1, int position = -1);

}  // namespace attnlab
