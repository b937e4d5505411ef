#pragma once
// Immutable values the training worker hands to the UI thread. Once published, nobody mutates
// them, so the UI can hold them (via shared_ptr<const ...>) while the worker keeps training.
#include <limits>
#include <memory>
#include <vector>

#include "data/task.h"
#include "tokenizer/vocabulary.h"
#include "experiment/experiment_config.h"
#include "model/model.h"
#include "model/trace.h"
#include "train/layer_diagnostics.h"
#include "train/qk_weight_history.h"

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
  LayerDiagnostics layer_diagnostics;    // per layer on the fixed diagnostics probe, at validation steps
};

struct ProgressSnapshot {
  int step = 0;
  int total_steps = 0;
  double loss = kNotMeasured;
  double val_loss = kNotMeasured;  // the most recent validation loss
  double accuracy = kNotMeasured;  // the most recent validation accuracy
  double lr = 0;
  double tokens_per_second = 0;  // smoothed over recent steps
  double steps_per_second = kNotMeasured;  // smoothed, including validation and trace time (StepTimer)
  double seconds_left = kNotMeasured;
  std::string qk_guard;  // QK-guard's switches so far (train/qk_guard.h), one message each, or empty
};

// What every model snapshot of one run shares, made once when the run's worker starts.
struct RunData {
  ExperimentConfig config;
  std::shared_ptr<const Vocabulary> vocabulary;
  int sequenceLength = 0;         // tokens per training/validation sequence
  bool hasAnswers = false;        // the task scores exact answers (accuracy), else loss only
  std::vector<Batch> evalBatches;  // a fixed validation sample (analysis/analysis.h validationBatches)
  // A model opened from a Hugging Face folder: its name ("" for the lab's own runs, which have
  // steps). It has no task: evalBatches is its first probe.
  std::string openedName;
  // An opened checkpoint's saved past of the query and key projections (the Spectra view's
  // history before this session); empty for a run trained here from the start.
  std::vector<QkWeightFrame> qkHistory;
};

// The model as it was after `step` steps: an independent copy of the weights that views and
// analyses may read on any thread (the trainer goes on with its own), with `headGains` already set
// on it, so whatever runs it sees the ablation. Analyses that must change gains themselves make
// their own copy (copyModel, which drops gains) and apply `headGains` to it first.
struct ModelSnapshot {
  int step = 0;
  std::shared_ptr<const Model> model;
  std::shared_ptr<const RunData> run;
  std::vector<std::vector<float>> headGains;  // the live ablation the views show; empty: none
};

// The probe's trace after `step` optimiser steps.
struct TraceSnapshot {
  int step = 0;
  Trace trace;
  // The task's vocabulary (shared by every snapshot of a run), so the probe editor can tokenise text.
  std::shared_ptr<const Vocabulary> vocabulary;
  int maxProbeLength = 0;  // the model's context
  // The model the trace came from (its head gains applied to the trace too).
  std::shared_ptr<const ModelSnapshot> model;
};

}  // namespace attnlab
