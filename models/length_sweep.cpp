#include "length_sweep.h"

#include <QStringList>
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "train/length_eval.h"

namespace attnlab {

LengthCurve evaluateLengths(const ModelSnapshot& snapshot, const Task& task, const std::vector<double>& multiples, int batches) {
  const RunData& run = *snapshot.run;
  LengthCurve curve;
  curve.step = snapshot.step;
  curve.trainedLength = run.sequenceLength;
  curve.hasAnswers = run.hasAnswers;
  for (const double m : multiples) {
    const int length = std::max(1, static_cast<int>(std::lround(m * run.sequenceLength)));
    try {
      curve.points.push_back({m, length, evaluateAtLength(run.config, task, *snapshot.model, run.sequenceLength, length, batches)});
    } catch (const ConfigError& e) {  // the engine's refusal: learned positions, a task too short
      curve.refusal = QString::fromStdString(e.what());
      break;
    } catch (const std::invalid_argument& e) {  // a finite corpus without sequences that long
      curve.refusal = QString::fromStdString(e.what());
      break;
    }
  }
  return curve;
}

QString parseLengthMultiples(const QString& text, std::vector<double>& multiples) {
  std::vector<double> parsed;
  for (const QString& part : text.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
    bool ok = false;
    const double m = part.trimmed().remove(QLatin1Char('x')).toDouble(&ok);
    if (!ok || !(m > 0) || m > 64)
      return QObject::tr("\"%1\" is not a length multiple (a number above 0, at most 64)").arg(part.trimmed().left(20));
    if (!parsed.empty() && m <= parsed.back()) return QObject::tr("multiples must increase: %1 after %2").arg(m).arg(parsed.back());
    parsed.push_back(m);
  }
  if (parsed.empty()) return QObject::tr("give at least one multiple, e.g. 1, 2, 4, 8");
  if (parsed.size() > 12) return QObject::tr("at most 12 multiples");
  multiples = std::move(parsed);
  return {};
}

// A run's job, its curve, and its task (made once per run on the job's thread: a text task with a
// learned BPE takes a while to build).
struct LengthSweep::Run {
  LengthCurve curve;
  std::shared_ptr<const RunData> taskRun;
  std::shared_ptr<const Task> task;
  BackgroundJob job;  // last: destroyed first, waiting for a running job that uses the task
};

LengthSweep::LengthSweep(int runs, QObject* parent) : QObject(parent) {
  for (int i = 0; i < std::max(1, runs); ++i) {
    runs_.push_back(std::make_unique<Run>());
    connect(&runs_.back()->job, &BackgroundJob::busyChanged, this, [this, i](bool busy) { emit busyChanged(i, busy); });
    connect(&runs_.back()->job, &BackgroundJob::failed, this, [this, i](const QString& message) {
      runs_[i]->curve = LengthCurve{};
      runs_[i]->curve.refusal = message;
      emit curveChanged(i);
    });
  }
}

LengthSweep::~LengthSweep() = default;

const LengthCurve& LengthSweep::curve(int run) const { return runs_.at(run)->curve; }

bool LengthSweep::busy(int run) const { return runs_.at(run)->job.busy(); }

void LengthSweep::clear(int run) {
  Run& r = *runs_.at(run);
  r.job.cancel();
  r.curve = LengthCurve{};
  emit curveChanged(run);
}

void LengthSweep::evaluate(int run, std::shared_ptr<const ModelSnapshot> snapshot, std::vector<double> multiples, int batches) {
  if (!snapshot || !snapshot->model || !snapshot->run) return clear(run);
  Run* r = runs_.at(run).get();
  if (!snapshot->run->openedName.empty()) {  // a Hugging Face model: no task to draw sequences of any length from
    r->job.cancel();
    r->curve = LengthCurve{};
    r->curve.refusal = tr("%1 has no task to draw longer sequences from: length extrapolation needs a lab run")
                           .arg(QString::fromStdString(snapshot->run->openedName));
    emit curveChanged(run);
    return;
  }
  r->job.submit([this, r, run, snapshot, multiples = std::move(multiples), batches] {
    if (r->taskRun != snapshot->run) {  // only this run's job thread touches its task
      std::string error;
      std::unique_ptr<Task> task = makeTask(snapshot->run->config.task, error);
      if (!task) throw std::runtime_error(error);
      r->task = std::move(task);
      r->taskRun = snapshot->run;
    }
    auto curve = std::make_shared<LengthCurve>(evaluateLengths(*snapshot, *r->task, multiples, batches));
    return [this, r, run, curve] {
      r->curve = std::move(*curve);
      emit curveChanged(run);
    };
  });
}

void LengthSweep::waitForIdle() {
  for (auto& r : runs_) r->job.waitForIdle();
}

}  // namespace attnlab
