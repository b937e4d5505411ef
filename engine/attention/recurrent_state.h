#pragma once
// The constant-size state a variant without a KV cache decodes from (linear attention, DeltaNet):
// one per query head of a layer. Feeding tokens 0..t one at a time and reading after token t gives
// row t of the variant's parallel forward (up to float summation order).
#include <cstddef>

namespace attnlab {

class RecurrentState {
 public:
  virtual ~RecurrentState() = default;
  virtual void reset() = 0;
  // Adds one token (its key k, value v and key gate, 1 without a gate) and writes the output o of
  // query q; every vector has d_head entries (k and v of the head's KV head).
  virtual void step(const float* q, const float* k, const float* v, float* o, float gate) = 0;
  // What the state holds, as stored.
  virtual size_t bytes() const = 0;
};

}  // namespace attnlab
