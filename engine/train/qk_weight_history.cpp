#include "train/qk_weight_history.h"

#include <algorithm>

namespace attnlab {

bool QkWeightHistory::isQkTensor(const std::string& name) {
  if (name.rfind("blocks.", 0) != 0) return false;
  const size_t attn = name.find(".attn.");
  if (attn == std::string::npos) return false;
  const std::string tail = name.substr(attn + 6);
  for (const char* t : {"wq.weight", "wk.weight", "wqk.weight", "wkv.weight", "wqkv.weight", "wuk.weight", "wdkv.weight"})
    if (tail == t) return true;
  return false;
}

ParamStore QkWeightHistory::qkTensors(const ParamStore& params, bool withValues) {
  ParamStore out;
  out.setAllocation(withValues ? Allocation::ValuesOnly : Allocation::ShapesOnly);
  for (const auto& p : params.all())
    if (isQkTensor(p->name)) {
      Param& copy = out.add(p->name, p->shape, p->decay);
      if (withValues) copy.value = p->value;
    }
  return out;
}

void QkWeightHistory::record(int step, const ParamStore& params) {
  if (step % stride_ != 0 || (!frames_.empty() && step <= frames_.back().step)) return;
  auto weights = std::make_shared<ParamStore>(qkTensors(params));
  const size_t frameBytes = std::max<size_t>(1, weights->totalElements() * sizeof(float));
  const int maxFrames = static_cast<int>(std::min<size_t>(kMaxFrames, kMaxBytes / frameBytes));
  if (maxFrames < 2) return;  // too large a model to keep a past of its projections
  frames_.push_back({step, std::move(weights)});
  while (static_cast<int>(frames_.size()) > maxFrames) {  // keep the multiples of twice the stride
    stride_ *= 2;
    std::erase_if(frames_, [this](const QkWeightFrame& f) { return f.step % stride_ != 0; });
  }
}

void QkWeightHistory::restore(std::vector<QkWeightFrame> frames, int stride) {
  frames_ = std::move(frames);
  stride_ = std::max(1, stride);
}

}  // namespace attnlab
