#pragma once
// What the Circuits view shows, computed on a BackgroundJob: activation patching of a clean /
// corrupted prompt pair (engine/interpret/activation_patching.h), the logit lens and direct logit
// attribution of the clean prompt, and the model's head composition (from the weights alone, so
// computed once per model snapshot). A sweep reports progress and can be cancelled.
#include <QObject>
#include <QString>
#include <memory>
#include <vector>

#include "background_job.h"
#include "interpret/activation_patching.h"
#include "interpret/direct_logit_attribution.h"
#include "interpret/head_composition.h"
#include "interpret/logit_lens.h"
#include "snapshots.h"

namespace attnlab {

struct CircuitsResult {
  PatchingRequest request;
  PatchingResult patching;
  LogitLens lens;  // of the clean prompt, tracking the answer
  DirectLogitAttribution dla;  // of the answer at the clean prompt's last position
  std::shared_ptr<const HeadComposition> composition;  // null when it failed:
  std::string composition_error;
  int layers = 0, heads = 0;
};

class CircuitsModel : public QObject {
  Q_OBJECT
 public:
  explicit CircuitsModel(QObject* parent = nullptr);

  // Starts a sweep on `model` (replacing any running one); results arrive with resultsChanged().
  void run(std::shared_ptr<const ModelSnapshot> model, PatchingRequest request);
  void cancel();
  bool busy() const { return job_.busy(); }
  const CircuitsResult* result() const { return result_.get(); }
  BackgroundJob& job() { return job_; }

 signals:
  void progress(int done, int total);
  void resultsChanged();
  void failed(const QString& message);
  void busyChanged(bool busy);

 private:
  BackgroundJob job_;
  std::shared_ptr<const CircuitsResult> result_;
  std::weak_ptr<const ModelSnapshot> composedModel_;  // the snapshot result_->composition belongs to
};

}  // namespace attnlab
