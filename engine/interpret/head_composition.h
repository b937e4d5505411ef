#pragma once
// Head composition (Elhage et al. 2021, "A Mathematical Framework for Transformer Circuits"). With
// W_QK = W_Q^T W_K and W_OV = W_O W_V of each head (residual-to-residual, d_model x d_model, the
// reading LayerNorm's weight folded in), a later head composes with an earlier one through
//   Q: |W_QK2^T W_OV1|_F, K: |W_QK2 W_OV1|_F, V: |W_OV2 W_OV1|_F, each over |.2|_F |W_OV1|_F.
// The OV copying score is sum(lambda) / sum(|lambda|) over the eigenvalues of the full OV circuit
// W_U W_OV W_E: 1 for a head that copies each token to itself.
// All products go through d_head x d_head factors, so a GPT-2-sized model takes seconds.
#include <vector>

#include "model/model.h"

namespace attnlab {

struct CompositionScore {
  int from_layer, from_head, to_layer, to_head;
  double q, k, v;
};

struct HeadComposition {
  std::vector<CompositionScore> pairs;        // every earlier head into every later one
  std::vector<std::vector<double>> copying;   // [layer][head] OV copying score
};

HeadComposition headComposition(const Model& model);

}  // namespace attnlab
