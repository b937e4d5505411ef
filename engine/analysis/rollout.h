#pragma once
// Attention rollout (Abnar & Zuidema): R = prod over layers, last on the left, of (A_l + I) / 2,
// with A_l the layer's map averaged over heads. Row i attributes position i's output to the inputs.
#include "core/tensor.h"
#include "model/trace.h"

namespace attnlab {

Mat attentionRollout(const Trace& trace);

}  // namespace attnlab
