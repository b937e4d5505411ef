#pragma once
// Immutable values the training worker hands to the UI thread. Once published, nobody mutates
// them, so the UI can hold them (via shared_ptr<const ...>) while the worker keeps training.
#include <limits>
#include <memory>

#include "model/trace.h"

namespace attnlab {

constexpr double kNotMeasured = std::numeric_limits<double>::quiet_NaN();

// One optimiser step as the loss chart sees it.
struct LossPoint {
  int step = 0;
  double loss = 0;
  double val_loss = kNotMeasured;  // NaN on steps without a validation pass
  double accuracy = kNotMeasured;  // validation accuracy, NaN if not measured or no answers
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
};

}  // namespace attnlab
