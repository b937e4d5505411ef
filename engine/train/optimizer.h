#pragma once
// AdamW with decoupled weight decay (Loshchilov & Hutter), applied to every Param with decay=true.
#include <vector>

#include "config/train_config.h"
#include "core/params.h"

namespace attnlab {

class AdamW {
 public:
  AdamW(ParamStore& params, const TrainConfig& config);
  // `ratios`, when given, scales lr per parameter (in ParamStore order): train/circuit_lr.h.
  void step(double lr, const std::vector<float>* ratios = nullptr);
  int steps() const { return t_; }
  // The moments, one per parameter in ParamStore order, for checkpoints.
  const std::vector<Mat>& firstMoments() const { return m_; }
  const std::vector<Mat>& secondMoments() const { return v_; }
  // Continues from saved moments after `steps` steps. Returns false (and changes nothing) when the
  // moments do not match the parameters' shapes.
  bool restore(int steps, std::vector<Mat> m, std::vector<Mat> v);

 private:
  ParamStore& params_;
  TrainConfig config_;
  std::vector<Mat> m_, v_;
  int t_ = 0;
};

// Each parameter's squared gradient norm in double, in params.all()'s order (tensors split over
// threads). Not finite exactly when one of its entries is not: float squares cannot overflow a double.
std::vector<double> gradientSquaredNorms(const ParamStore& params);
// Global L2 norm of all gradients: the squared norms summed in order.
double gradientNorm(const std::vector<double>& squaredNorms);
double gradientNorm(const ParamStore& params);
// Scales every gradient so the global norm is at most maxNorm. Returns the norm before clipping.
double clipGradients(ParamStore& params, double maxNorm);
// The same with the norm already known (the trainer has the squared norms from its finiteness check).
double clipGradients(ParamStore& params, double maxNorm, double norm);

}  // namespace attnlab
