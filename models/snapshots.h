#pragma once
// Immutable values the training worker hands to the UI thread. Once published, nobody mutates
// them, so the UI can hold them (via shared_ptr<const ...>) while the worker keeps training.
#include <limits>
#include <memory>
#include <vector>

#include "data/vocabulary.h"
#include "model/trace.h"

namespace attnlab {

constexpr double kNotMeasured = std::numeric_limits<double>::quiet_NaN();

// One optimiser step as the training charts see it.
struct LossPoint {
  int step = 0;
  double loss = 0;
  double val_loss = kNotMeasured;  // NaN on steps without a validation pass
  double accuracy = kNotMeasured;  // validation accuracy, NaN if not measured or no answers
  double lr = kNotMeasured;
  double grad_norm = kNotMeasured;       // all parameters, before clipping
  std::vector<double> layer_grad_norm;   // per block, before clipping
  std::vector<double> layer_entropy;     // mean attention entropy (nats) per layer on the step's batch
};

struct ProgressSnapshot {
  int step = 0;
  int total_steps = 0;
  double loss = kNotMeasured;
  double val_loss = kNotMeasured;  // the most recent validation loss
  double accuracy = kNotMeasured;  // the most recent validation accuracy
  double lr = 0;
  double tokens_per_second = 0;  // smoothed over recent steps
  double steps_per_second = 0;   // smoothed, including validation and trace time
  double seconds_left = kNotMeasured;
};

// The probe's trace after `step` optimiser steps.
struct TraceSnapshot {
  int step = 0;
  Trace trace;
  // The task's vocabulary (shared by every snapshot of a run), so the probe editor can tokenise text.
  std::shared_ptr<const Vocabulary> vocabulary;
  int maxProbeLength = 0;  // the model's context
  // Hook for the KV-cache policies: [layer][head] row-major [query * T + key], true where the
  // policy has evicted that key for that query. Empty (nothing evicted) for a plain forward.
  std::vector<std::vector<std::vector<bool>>> evicted;
};

}  // namespace attnlab
