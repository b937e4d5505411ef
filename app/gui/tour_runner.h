#pragma once
// Runs a tour in the main window: a step's actions in order (open a preset, train to a step or
// until a condition holds, select a head, switch the view, set a KV policy, highlight a widget),
// then its live numbers, computed off the UI thread (tour_numbers.h), fill in its text and decide
// its checks. A step with a "predict first" question waits for the learner's choice before its
// experiment runs, and reveals the answer after. Back shows a step already run as it came out;
// going forward runs the steps not run yet, in order, so each starts from the state the tour
// built. Training the tour started is the tour's own: switching to the next experiment discards
// it without asking (anything the learner had before the tour is still asked about).
#include <QObject>
#include <QPointer>
#include <QString>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "experiment/experiment_config.h"
#include "snapshots.h"
#include "tour_file.h"

namespace attnlab {

class BackgroundJob;
class MainWindow;
class TourCallout;

class TourRunner : public QObject {
  Q_OBJECT
 public:
  // Steps of a @train-until between two looks at its condition.
  static constexpr int kUntilStride = 25;

  struct CheckResult {
    bool held = false;
    QString text;  // the @pass or @fail text, numbers filled in ("" if the tour gives none)
  };
  struct StepResult {
    bool done = false;  // actions ran and numbers came in
    QString problem;    // why the step could not run ("" otherwise)
    QString text;       // Markdown, numbers filled in
    QString reveal;     // the answer's explanation, numbers filled in
    int predicted = 0;  // the learner's choice, 1-based (0: none)
    std::vector<CheckResult> checks;
    TourNumbers numbers;
    bool allHeld() const;
  };

  explicit TourRunner(MainWindow* window, QObject* parent = nullptr);
  ~TourRunner() override;

  // Starts `tour` at its first step (a copy is kept).
  void start(const Tour& tour);
  void stop();  // ends the tour (training stays as it is)
  bool active() const { return tour_.has_value(); }
  const Tour& tour() const { return *tour_; }
  int current() const { return current_; }
  const StepResult& result(int step) const { return results_.at(step); }
  bool busy() const { return busy_; }  // the current step's actions or numbers are under way
  QString status() const { return status_; }
  bool waitingForPrediction() const;
  // Questions do not wait for a choice (the headless check, and "run up to" jumps).
  void setAutomatic(bool on) { automatic_ = on; }

  void predict(int choice);  // 1-based; 0 runs the experiment without a prediction
  bool canGoBack() const;
  bool canGoNext() const;
  void back();
  void next();
  void restart();
  void goTo(int step);  // shows a step run before; a later one runs every step up to it

 signals:
  void changed();            // the current step, its state or its result changed
  void stepDone(int step);   // a step's result is complete (done or with a problem)

 private:
  void show(int step);
  void runCurrent();
  void runNextAction();
  bool flushExperiment();
  bool useOpenedModel();
  void probeRepeat(const TourAction& a);  // applies the collected @preset / @set; false when it could not
  void trainTo(int step);
  void checkArrival();
  void afterArrival();
  void computeNumbers(std::vector<TourCall> calls, std::function<void(const TourNumbers&)> then);
  void finishStep();
  void fail(const QString& why);
  void setStatus(const QString& text);
  QWidget* widgetNamed(const QString& name) const;

  MainWindow* window_;
  TourCallout* callout_;
  BackgroundJob* job_;
  std::optional<Tour> tour_;
  int current_ = 0;
  int target_ = 0;  // the furthest step a goTo() asked for
  std::vector<StepResult> results_;
  std::map<std::string, double> kept_;  // @keep numbers of the steps run so far
  bool busy_ = false;
  bool automatic_ = false;
  QString status_;
  size_t nextAction_ = 0;
  std::optional<ExperimentConfig> pendingConfig_;
  bool ownsRun_ = false;  // the session's run was started by this tour
  int trainTarget_ = 0;   // while training to a step; 0 otherwise
  int lastTrainTarget_ = 0;  // the latest @train's step, for the number train_target
  bool waitingForOpened_ = false;  // @opened-model: until the opened model's first trace
  std::vector<int> probeWanted_;   // @probe-repeat: until the probe is traced
  static constexpr uint64_t kProbeSeed = 3;  // the random half of @probe-repeat
  const TourAction* until_ = nullptr;
  std::shared_ptr<const TraceSnapshot> trace_;
  ProgressSnapshot progress_;
  bool hasProgress_ = false;
  quint64 generation_ = 0;  // bumped when a step is left, so late deliveries are dropped
};

}  // namespace attnlab
