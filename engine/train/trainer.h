#pragma once
// Owns one experiment: task, model, optimiser, history. Not thread-safe: one thread drives it
// (the UI's worker, or the CLI). Internally uses config.train.threads threads.
#include <functional>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/random.h"
#include "data/task.h"
#include "experiment/experiment_config.h"
#include "model/model.h"
#include "model/trace.h"
#include "train/layer_diagnostics.h"
#include "train/optimizer.h"
#include "train/qk_weight_history.h"
#include "train/thread_governor.h"

namespace attnlab {

// Training produced NaN/Inf. `what()` names the step and the first tensor that went bad.
struct DivergenceError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// The configuration cannot be built; `what()` says why in one line.
struct ConfigError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct TrainPoint {
  int step = 0;  // 1-based count of optimiser steps taken
  double loss = 0;
  double val_loss = std::numeric_limits<double>::quiet_NaN();  // NaN where not evaluated
  double accuracy = std::numeric_limits<double>::quiet_NaN();  // validation, NaN if the task has none
  double lr = 0;
  double grad_norm = 0;                // before clipping
  std::vector<double> layer_grad_norm;  // per block
  std::vector<double> layer_entropy;    // mean attention entropy per layer on this batch
  LayerDiagnostics layer_diagnostics;   // on the diagnostics probe, at validation steps when the trainer has one
  std::vector<double> layer_max_score;  // largest |s_ij| per layer on this batch (train/qk_guard.h)
  std::vector<int> qk_guard_switched;   // layers QK-guard switched to qk_norm after this step
  double tokens_per_second = 0;
  double seconds = 0;  // wall time of this step
};

struct EvalResult {
  double loss = 0;
  double perplexity = 0;
  double accuracy = std::numeric_limits<double>::quiet_NaN();     // per answer token
  double exact_match = std::numeric_limits<double>::quiet_NaN();  // whole answer correct per sequence
  long tokens = 0;
};

// Length of the training sequences: the task's natural length for the model's context, or for
// task.seq_len when that is set and shorter.
int trainingSequenceLength(const ExperimentConfig& config, const Task& task);

// The generators of a run's training batches and of its fixed validation batches (seed = train.seed):
// sampling the task from them reproduces exactly the batches a Trainer draws (attnlab-cli data).
Rng trainingDataRng(uint64_t seed);
Rng validationDataRng(uint64_t seed);

// The probe trace of `tokens` (at most the model's context) with each position's token text.
Trace traceModel(const Model& model, const Vocabulary& vocabulary, const std::vector<int>& tokens);

class Trainer {
 public:
  // Throws ConfigError with a clear message when the configuration is invalid.
  explicit Trainer(const ExperimentConfig& config);
  // Builds around an existing model (checkpoint load); history continues from `history`.
  Trainer(const ExperimentConfig& config, std::unique_ptr<Model> model, std::vector<TrainPoint> history);
  ~Trainer();

  const ExperimentConfig& config() const { return config_; }
  Model& model() { return *model_; }
  const Model& model() const { return *model_; }
  const Task& task() const { return *task_; }
  int stepsDone() const { return step_; }
  int sequenceLength() const { return seqLen_; }  // tokens per training/validation sequence
  bool finished() const { return step_ >= config_.train.steps; }

  // One optimiser step on a fresh batch. Throws DivergenceError (and leaves weights as they were
  // before the step) when the loss or a gradient is not finite.
  TrainPoint trainStep();
  EvalResult evaluate(int batches = 0);  // 0: config.train.eval_batches
  Trace trace(const std::vector<int>& tokens) const;
  std::vector<int> probeTokens() const;  // a fixed example from the task (same every call)
  const std::vector<TrainPoint>& history() const { return history_; }
  // Measures each validation step's per-layer diagnostics into its TrainPoint (analysis/
  // layer_diagnostics_probe.h makes the usual one); none set: they are not measured.
  using DiagnosticsProbe = std::function<LayerDiagnostics(const Model&)>;
  void setDiagnosticsProbe(DiagnosticsProbe probe) { diagnose_ = std::move(probe); }
  // The thinned past of the query and key projections (from step 0), for the spectra over training.
  const QkWeightHistory& qkHistory() const { return qkHistory_; }
  QkWeightHistory& qkHistory() { return qkHistory_; }  // a checkpoint restores it
  double learningRate(int step) const;  // warmup + cosine

  // What continuing exactly needs beyond the weights and history (io/training_state.h saves it):
  // the optimiser, and the generator that draws the training batches. The schedule position is
  // stepsDone(); validation and probe batches are drawn from the seed afresh each time.
  const AdamW& optimizer() const { return *optimizer_; }
  const Rng& dataStream() const { return dataRng_; }
  // Continues a restored run from saved optimiser moments and data-stream state. Returns false
  // (nothing changed) when the moments do not fit the model or the state is not a generator's.
  bool restoreTrainingState(int optimizerSteps, std::vector<Mat> m, std::vector<Mat> v, const std::string& dataStream);

 private:
  void build();
  void checkActivationsFit();

  ExperimentConfig config_;
  std::unique_ptr<Task> task_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<AdamW> optimizer_;
  std::unique_ptr<Workspace> workspace_;
  int seqLen_ = 0;
  Rng dataRng_;
  int step_ = 0;
  std::vector<TrainPoint> history_;
  DiagnosticsProbe diagnose_;
  QkWeightHistory qkHistory_;
  bool activationsChecked_ = false;  // around a model built elsewhere, the first step checks them
  ThreadGovernor threads_{1};
};

}  // namespace attnlab
