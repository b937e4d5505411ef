#pragma once
// Length extrapolation for the views (engine/train/length_eval.h): a run's latest model snapshot
// evaluated at multiples of its training length, on a BackgroundJob per run, so the UI thread only
// receives the finished curve. One sweep can hold several runs (the comparison window's chart has
// a line per run); each run's evaluations replace its own earlier ones only.
#include <QObject>
#include <QString>
#include <memory>
#include <vector>

#include "background_job.h"
#include "snapshots.h"
#include "train/trainer.h"

namespace attnlab {

struct LengthPoint {
  double multiple = 1;
  int length = 0;  // tokens: round(multiple x training length)
  EvalResult result;
};

struct LengthCurve {
  int step = -1;            // the snapshot's step; -1: never evaluated
  int trainedLength = 0;    // tokens per training sequence
  std::vector<LengthPoint> points;  // the multiples evaluated, in order, up to a refusal
  QString refusal;          // the engine's one-line reason when a multiple could not run ("" when all did)
  bool hasAnswers = false;  // accuracy is measured (else loss only)
  bool evaluated() const { return step >= 0; }
};

// Evaluates `snapshot` at each multiple (validation batches as the run's train.eval_batches when
// `batches` is 0). Stops at the first length the model or task refuses, keeping the points before it.
LengthCurve evaluateLengths(const ModelSnapshot& snapshot, const Task& task, const std::vector<double>& multiples, int batches = 0);
// "1, 2, 4, 8" into multiples; "" when fine, else a one-line reason.
QString parseLengthMultiples(const QString& text, std::vector<double>& multiples);

class LengthSweep : public QObject {
  Q_OBJECT
 public:
  explicit LengthSweep(int runs = 1, QObject* parent = nullptr);
  ~LengthSweep() override;

  int runCount() const { return static_cast<int>(runs_.size()); }
  const LengthCurve& curve(int run) const;
  bool busy(int run) const;
  // Queues the evaluation of `snapshot` for `run` (latest wins per run); a null snapshot clears it.
  void evaluate(int run, std::shared_ptr<const ModelSnapshot> snapshot, std::vector<double> multiples, int batches = 0);
  void clear(int run);
  void waitForIdle();  // every run's job (tests, screenshots)

 signals:
  void curveChanged(int run);
  void busyChanged(int run, bool busy);

 private:
  struct Run;
  std::vector<std::unique_ptr<Run>> runs_;
};

}  // namespace attnlab
