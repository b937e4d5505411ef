#pragma once
// Named trainable tensors. Every parameter is a row-major matrix; its logical shape follows
// PyTorch (linear weights [out, in], vectors [n]) so checkpoints interoperate.
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace attnlab {

// What ParamStore::add allocates for each parameter.
enum class Allocation {
  ValuesAndGrads,  // a model that trains
  ValuesOnly,      // a model that is read (opened, copied for the views): gradients come with the first backward
  ShapesOnly,      // names and shapes, nothing allocated: counts a model of any size
};

struct Param {
  std::string name;        // e.g. "blocks.0.attn.wq.weight"
  std::vector<int> shape;  // logical shape; value is shape[0] x prod(rest), or 1 x n for a vector
  Mat value;
  Mat grad;  // empty after releaseGrads() until zeroGrad() or a backward needs it
  bool decay = true;  // AdamW weight decay applies (off for norms, biases, gains)
};

class ParamStore {
 public:
  // Creates a zero-initialised parameter and, as the store's allocation says, its gradient buffer.
  Param& add(const std::string& name, std::vector<int> shape, bool decay = true);
  void setAllocation(Allocation allocation) { allocation_ = allocation; }
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
  Allocation allocation_ = Allocation::ValuesAndGrads;
};

}  // namespace attnlab
