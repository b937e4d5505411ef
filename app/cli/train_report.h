#pragma once
// Everything 'train' shows while it runs: the progress bar (stderr, terminals only), one line or
// JSON object per evaluation (stdout), and the final metrics.
#include <chrono>
#include <string>

#include "progress_bar.h"
#include "train/trainer.h"

namespace attnlab::cli {

class TrainReport {
 public:
  // `startStep`: the steps already done when this run starts (a resumed run), for the ETA.
  TrainReport(int totalSteps, bool json, bool quiet, int startStep = 0);

  // Also tells each QK-guard switch (train/qk_guard.h) of the step, even under --quiet.
  void onStep(const TrainPoint& point, double qkGuard = 0);
  void onDiverged(const std::string& reason, int lastGoodStep);
  // After at least one step: `eval` is a validation pass on the final weights, saved in `out`.
  void onFinished(const EvalResult& eval, const std::string& out, bool interrupted);

  double tokensPerSecond() const;  // training throughput so far (evaluations excluded)
  double elapsedSeconds() const;   // wall time since the start, evaluations included

 private:
  std::string statusLine() const;

  int totalSteps_;
  int startStep_;
  bool json_;
  bool quiet_;
  bool showBar_;
  ProgressBar bar_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  double tokens_ = 0;
  double stepSeconds_ = 0;
  TrainPoint last_;           // the latest step (step 0 until one ran)
  TrainPoint lastEvaluated_;  // the latest step with a validation loss
};

}  // namespace attnlab::cli
