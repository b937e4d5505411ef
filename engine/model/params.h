#pragma once
// Named trainable tensors. Every parameter is a row-major matrix; its logical shape follows
// PyTorch (linear weights [out, in], vectors [n]) so checkpoints interoperate.
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace attnlab {

struct Param {
  std::string name;        // e.g. "blocks.0.attn.wq.weight"
  std::vector<int> shape;  // logical shape; value is shape[0] x prod(rest), or 1 x n for a vector
  Mat value;
  Mat grad;  // empty after releaseGrads() until zeroGrad() or a backward needs it
  bool decay = true;  // AdamW weight decay applies (off for norms, biases, gains)
};

class ParamStore {
 public:
  // Creates a zero-initialised parameter and its gradient buffer (only its name and shape in a
  // store that counts shapes).
  Param& add(const std::string& name, std::vector<int> shape, bool decay = true);
  // A store that records names and shapes without allocating: counts a model of any size.
  void setShapesOnly(bool shapesOnly) { shapesOnly_ = shapesOnly; }
  Param* find(const std::string& name);
  const Param* find(const std::string& name) const;
  std::vector<std::unique_ptr<Param>>& all() { return params_; }
  const std::vector<std::unique_ptr<Param>>& all() const { return params_; }
  size_t totalElements() const;  // from the shapes, so a store of shapes counts too
  void zeroGrad();      // allocates gradients where released
  void ensureGrads();   // allocates released gradients as zero, keeps the others (backward accumulates)
  void releaseGrads();  // frees every gradient: a model that is only read holds none

 private:
  std::vector<std::unique_ptr<Param>> params_;
  bool shapesOnly_ = false;
};

}  // namespace attnlab
