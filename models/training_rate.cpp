#include "training_rate.h"

#include <QCoreApplication>

#include "background_job.h"
#include "train/step_rate.h"

namespace attnlab {

TrainingRate* TrainingRate::shared() {
  static TrainingRate* rate = new TrainingRate;  // parented to the application, gone with it
  return rate;
}

TrainingRate::TrainingRate() : QObject(QCoreApplication::instance()), job_(new BackgroundJob(this)) {
  job_->submit([this]() -> BackgroundJob::Delivery {
    const double measured = measureTrainingFlopsPerSecond(TrainConfig{}.threads);
    return [this, measured] { set(measured); };
  });
}

void TrainingRate::set(double flopsPerSecond) {
  job_->cancel();
  flopsPerSecond_ = flopsPerSecond;
  emit changed();
}

}  // namespace attnlab
