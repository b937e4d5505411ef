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
  job_.submit([this, self, snapshot = std::move(snapshot), request = std::move(request)]() -> BackgroundJob::Delivery {
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
    return [this, result] {
      result_ = result;
      emit resultsChanged();
    };
  });
}

void CircuitsModel::cancel() { job_.cancel(); }

}  // namespace attnlab
