#pragma once
// This machine's training speed (FLOP per second), measured once per process on a BackgroundJob
// (engine/train/step_rate.h: a few steps of a small experiment, about half a second off the UI
// thread), for the time-per-step estimate shown before an experiment is applied.
#include <QObject>

namespace attnlab {

class BackgroundJob;

class TrainingRate : public QObject {
  Q_OBJECT
 public:
  // The process's one rate; its first use starts the measurement.
  static TrainingRate* shared();

  bool known() const { return flopsPerSecond_ > 0; }
  double flopsPerSecond() const { return flopsPerSecond_; }  // 0 until known
  // A rate known otherwise (a test's); a measurement still running is then dropped.
  void set(double flopsPerSecond);

 signals:
  void changed();

 private:
  TrainingRate();
  BackgroundJob* job_;
  double flopsPerSecond_ = 0;
};

}  // namespace attnlab
