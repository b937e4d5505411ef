#pragma once
// What the Circuits view shows, computed on a BackgroundJob: activation patching of a clean /
// corrupted prompt pair (engine/interpret/activation_patching.h), the logit lens and direct logit
// attribution of the clean prompt, and the model's head composition (from the weights alone, so
// computed once per model snapshot). A sweep reports progress and can be cancelled. Retrieval heads
// (engine/interpret/retrieval_heads.h) run on the same worker: on a lab run's validation sample,
// or on passkey prompts written with an opened model's own tokenizer.
#include <QObject>
#include <QString>
#include <memory>
#include <vector>

#include "background_job.h"
#include "interpret/activation_patching.h"
#include "interpret/direct_logit_attribution.h"
#include "interpret/head_composition.h"
#include "interpret/logit_lens.h"
#include "interpret/retrieval_heads.h"
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

struct RetrievalResult {
  RetrievalStudy study;
  int k = 0;
  std::string sequences;  // what the study ran on, for people: "4 passkey prompts of 256 tokens"
};

// The sequences the retrieval study reads: a lab run's validation sample (its task marks the
// answers), or, for a model opened from a Hugging Face folder, passkey prompts in its tokenizer's
// vocabulary. Throws std::invalid_argument with a one-line reason.
std::vector<Batch> retrievalSequences(const ModelSnapshot& snapshot, std::string& description);

class CircuitsModel : public QObject {
  Q_OBJECT
 public:
  explicit CircuitsModel(QObject* parent = nullptr);

  // Starts a sweep on `model` (replacing any running one); results arrive with resultsChanged().
  void run(std::shared_ptr<const ModelSnapshot> model, PatchingRequest request);
  // The retrieval study with k heads knocked out (results arrive with retrievalChanged()).
  void runRetrieval(std::shared_ptr<const ModelSnapshot> model, int k);
  void cancel();
  bool busy() const { return job_.busy(); }
  const CircuitsResult* result() const { return result_.get(); }
  const RetrievalResult* retrieval() const { return retrieval_.get(); }
  BackgroundJob& job() { return job_; }

 signals:
  void progress(int done, int total);
  void resultsChanged();
  void retrievalChanged();
  void failed(const QString& message);
  void busyChanged(bool busy);

 private:
  BackgroundJob job_;
  std::shared_ptr<const CircuitsResult> result_;
  std::shared_ptr<const RetrievalResult> retrieval_;
  std::weak_ptr<const ModelSnapshot> composedModel_;  // the snapshot result_->composition belongs to
};

}  // namespace attnlab
