#include "circuits_model.h"

#include <QPointer>

#include "interpret/passkey_prompts.h"
#include "queued_call.h"
#include "tokenizer/tokenizer.h"

namespace attnlab {

CircuitsModel::CircuitsModel(QObject* parent) : QObject(parent) {
  connect(&job_, &BackgroundJob::failed, this, &CircuitsModel::failed);
  connect(&job_, &BackgroundJob::busyChanged, this, &CircuitsModel::busyChanged);
}

void CircuitsModel::run(std::shared_ptr<const ModelSnapshot> snapshot, PatchingRequest request) {
  QPointer<CircuitsModel> self(this);
  std::shared_ptr<const HeadComposition> composition;
  if (result_ && composedModel_.lock() == snapshot) composition = result_->composition;  // same weights
  job_.submit([this, self, snapshot, composition, request = std::move(request)]() -> BackgroundJob::Delivery {
    const Model& model = *snapshot->model;
    auto result = std::make_shared<CircuitsResult>();
    result->request = request;
    result->layers = model.config().n_layers;
    result->heads = model.config().n_heads;
    result->patching = activationPatching(model, request, [self](int done, int total) {
      postQueued(self, [self, done, total] {
        if (self) emit self->progress(done, total);
      });
      return !BackgroundJob::stopRequested();
    });
    if (BackgroundJob::stopRequested()) return {};
    result->lens = logitLens(model, request.clean, 3, result->patching.answer);
    result->dla = directLogitAttribution(model, request.clean, result->patching.answer);
    try {  // a model whose heads cannot be read as W_QK, W_OV still shows its patching
      result->composition = composition ? composition : std::make_shared<const HeadComposition>(headComposition(model));
    } catch (const std::exception& e) {
      result->composition_error = e.what();
    }
    return [this, result, snapshot] {
      result_ = result;
      composedModel_ = snapshot;
      emit resultsChanged();
    };
  });
}

std::vector<Batch> retrievalSequences(const ModelSnapshot& snapshot, std::string& description) {
  const RunData* run = snapshot.run.get();
  if (!run) throw std::invalid_argument("the model has no run data to draw sequences from");
  if (run->openedName.empty()) {
    if (!run->hasAnswers || run->evalBatches.empty())
      throw std::invalid_argument("the run's task marks no answers to retrieve (try passkey, recall or induction)");
    int sequences = 0;
    for (const Batch& b : run->evalBatches) sequences += b.B;
    description = std::to_string(sequences) + " validation sequences of the task";
    return run->evalBatches;
  }
  if (!run->vocabulary || !run->vocabulary->tokenizer())
    throw std::invalid_argument("retrieval writes passkey prompts with the folder's tokenizer, and this folder has none");
  const ModelConfig& c = snapshot.model->config();
  PasskeyPromptOptions options;
  options.length = defaultPasskeyLength(c.context);
  std::vector<Batch> prompts = passkeyPrompts(*run->vocabulary->tokenizer(), c.vocab, c.context, options);
  description = std::to_string(options.batches * options.batch_size) + " passkey prompts of " + std::to_string(options.length) + " tokens";
  return prompts;
}

void CircuitsModel::runRetrieval(std::shared_ptr<const ModelSnapshot> snapshot, int k) {
  QPointer<CircuitsModel> self(this);
  job_.submit([this, self, snapshot, k]() -> BackgroundJob::Delivery {
    auto result = std::make_shared<RetrievalResult>();
    result->k = k;
    const std::vector<Batch> sequences = retrievalSequences(*snapshot, result->sequences);
    result->study = retrievalStudy(*snapshot->model, sequences, k, 1, [self](int done, int total) {
      postQueued(self, [self, done, total] {
        if (self) emit self->progress(done, total);
      });
      return !BackgroundJob::stopRequested();
    });
    if (BackgroundJob::stopRequested()) return {};
    return [this, result] {
      retrieval_ = result;
      emit retrievalChanged();
    };
  });
}

void CircuitsModel::cancel() { job_.cancel(); }

}  // namespace attnlab
