#include "core/params.h"

#include <stdexcept>

#include "core/threads.h"

namespace attnlab {

Param& ParamStore::add(const std::string& name, std::vector<int> shape, bool decay) {
  if (find(name)) throw std::logic_error("duplicate parameter " + name);
  auto p = std::make_unique<Param>();
  p->name = name;
  p->decay = decay;
  int rows = shape.size() == 1 ? 1 : shape[0];
  int cols = 1;
  for (size_t i = shape.size() == 1 ? 0 : 1; i < shape.size(); ++i) cols *= shape[i];
  p->shape = std::move(shape);
  if (allocation_ != Allocation::ShapesOnly) p->value = Mat::Zero(rows, cols);
  // Allocating a released gradient only to free it would double an opened model's peak memory.
  if (allocation_ == Allocation::ValuesAndGrads) p->grad = Mat::Zero(rows, cols);
  params_.push_back(std::move(p));
  return *params_.back();
}

Param* ParamStore::find(const std::string& name) {
  for (auto& p : params_)
    if (p->name == name) return p.get();
  return nullptr;
}

const Param* ParamStore::find(const std::string& name) const {
  for (auto& p : params_)
    if (p->name == name) return p.get();
  return nullptr;
}

size_t ParamStore::totalElements() const {
  size_t n = 0;
  for (auto& p : params_) {
    size_t elements = 1;
    for (int extent : p->shape) elements *= static_cast<size_t>(extent);
    n += elements;
  }
  return n;
}

void ParamStore::zeroGrad() {
#pragma omp parallel for schedule(dynamic) if (params_.size() > 1 && !inParallelRegion())
  for (size_t i = 0; i < params_.size(); ++i) params_[i]->grad.setZero(params_[i]->value.rows(), params_[i]->value.cols());
}

void ParamStore::ensureGrads() {
  for (auto& p : params_)
    if (p->grad.size() != p->value.size()) p->grad.setZero(p->value.rows(), p->value.cols());
}

void ParamStore::releaseGrads() {
  for (auto& p : params_) p->grad = Mat();
}

}  // namespace attnlab
