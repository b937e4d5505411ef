#include "circuits_model.h"

#include <QMetaObject>
#include <QPointer>

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
      QMetaObject::invokeMethod(self, [self, done, total] {
        if (self) emit self->progress(done, total);
      }, Qt::QueuedConnection);
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

void CircuitsModel::cancel() { job_.cancel(); }

}  // namespace attnlab
