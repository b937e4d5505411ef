#pragma once
// A thinned history of the weights the QK spectra are computed from (each layer's query and key
// projections: analysis/qk_spectrum.h headProjections), kept by the trainer and saved in the
// checkpoint (io/qk_history_file.h), so the Spectra view's step slider still has a past after the
// run is reopened. Frames are at steps that are multiples of a stride, from step 0; when there
// would be more than kMaxFrames, every other one goes and the stride doubles, so the kept steps
// stay evenly spaced (between kMaxFrames / 2 and kMaxFrames of them). A model whose projections
// would take more than kMaxBytes over all frames keeps fewer frames, and none below two.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "core/params.h"

namespace attnlab {

struct QkWeightFrame {
  int step = 0;
  std::shared_ptr<const ParamStore> weights;  // only the query and key projections, as named in the model
};

class QkWeightHistory {
 public:
  static constexpr int kMaxFrames = 32;
  static constexpr size_t kMaxBytes = size_t(64) << 20;

  // True for the tensors headProjections reads: blocks.{i}.attn. wq, wk, wqk, wkv, wqkv, wuk, wdkv.
  static bool isQkTensor(const std::string& name);
  // The query and key projections of `params`: copied, or their names and shapes only (nothing allocated).
  static ParamStore qkTensors(const ParamStore& params, bool withValues = true);

  // Keeps a copy of `params`' projections when `step` is a multiple of the stride.
  void record(int step, const ParamStore& params);
  // A saved history (steps increasing, multiples of `stride`), as the checkpoint reader gives it.
  void restore(std::vector<QkWeightFrame> frames, int stride);
  const std::vector<QkWeightFrame>& frames() const { return frames_; }
  int stride() const { return stride_; }

 private:
  std::vector<QkWeightFrame> frames_;
  int stride_ = 1;
};

}  // namespace attnlab
