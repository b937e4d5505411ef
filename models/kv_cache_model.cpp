#include "kv_cache_model.h"

#include <stdexcept>

#include "background_job.h"
#include "quoted_text.h"
#include "kv/eviction_policy.h"

namespace attnlab {

KvCacheModel::KvCacheModel(QObject* parent) : QObject(parent), job_(new BackgroundJob(this)) {
  connect(job_, &BackgroundJob::busyChanged, this, &KvCacheModel::busyChanged);
  connect(job_, &BackgroundJob::failed, this, &KvCacheModel::fail);
}

bool KvCacheModel::busy() const { return job_->busy(); }

void KvCacheModel::waitForIdle() { job_->waitForIdle(); }

void KvCacheModel::clear() {
  job_->cancel();
  result_.reset();
  message_.clear();
  emit resultChanged();
}

std::vector<std::pair<QString, QString>> KvCacheModel::policies() {
  std::vector<std::pair<QString, QString>> out;
  for (const auto& e : EvictionPolicyRegistry::instance().entries())
    out.push_back({QString::fromStdString(e.name), QString::fromStdString(e.summary)});
  return out;
}

std::vector<SettingSpec> KvCacheModel::policySettings(const QString& policy) {
  const auto made = EvictionPolicyRegistry::instance().create(policy.toStdString());
  return made ? made->settingSpecs() : std::vector<SettingSpec>{};
}

void KvCacheModel::fail(const QString& message) {
  message_ = shortenLongWords(message);  // a typed prompt's refused token is quoted back
  emit failed(message_);
}

void KvCacheModel::run(const KvCacheRequest& request) {
  if (!request.model || !request.model->model || !request.model->run)
    return fail(tr("no model yet: train a few steps first"));
  const ModelSnapshot& snapshot = *request.model;
  const Vocabulary& vocabulary = *snapshot.run->vocabulary;
  const int context = snapshot.model->config().context;
  OccupancyRequest occupancy;
  occupancy.generate = request.tokens;
  occupancy.runs = request.runs;
  occupancy.matched = request.matched;
  QString source;
  switch (request.prompt) {
    case KvCacheRequest::Prompt::Probe:
      occupancy.prompt = request.probe;
      source = tr("the probe");
      break;
    case KvCacheRequest::Prompt::TaskExample: {
      if (snapshot.run->evalBatches.empty() || snapshot.run->evalBatches.front().B == 0)
        return fail(tr("this task has no validation example"));
      const Batch& batch = snapshot.run->evalBatches.front();
      occupancy.prompt.assign(batch.inputs.begin(), batch.inputs.begin() + batch.T);
      occupancy.targets.assign(batch.targets.begin(), batch.targets.begin() + batch.T);
      source = tr("the task example");
      break;
    }
    case KvCacheRequest::Prompt::Text: {
      std::string error;
      if (!vocabulary.encode(request.text.toStdString(), occupancy.prompt, error)) return fail(QString::fromStdString(error));
      source = tr("the prompt");
      break;
    }
  }
  if (occupancy.prompt.empty()) return fail(tr("%1 is empty: nothing to decode").arg(source));
  if (occupancy.targets.empty()) {  // a typed or probe prompt: each token is the next one's target
    occupancy.targets.assign(occupancy.prompt.begin() + 1, occupancy.prompt.end());
    occupancy.targets.push_back(-1);
  }
  if (request.tokens < 0 || request.tokens >= context)
    return fail(tr("new tokens must be between 0 and %1 (the model's context is %2)").arg(context - 1).arg(context));
  QString note;
  const int room = context - request.tokens;
  if (static_cast<int>(occupancy.prompt.size()) > room) {
    note = tr("%1 cut to its first %2 of %3 tokens, to leave room for %4 new ones in the context of %5")
               .arg(source).arg(room).arg(occupancy.prompt.size()).arg(request.tokens).arg(context);
    occupancy.prompt.resize(room);
    occupancy.targets.resize(room);
  }

  std::shared_ptr<const ModelSnapshot> keep = request.model;
  job_->submit([this, keep, occupancy, note] {
    auto result = std::make_shared<KvCacheResult>();
    result->record = recordOccupancy(*keep->model, occupancy);  // throws a one-line reason: failed()
    result->modelStep = keep->step;
    result->openedName = QString::fromStdString(keep->run->openedName);
    result->note = note;
    const Vocabulary& vocabulary = *keep->run->vocabulary;
    for (const OccupancyRun& run : result->record.runs) {
      QStringList text;
      for (int id : run.tokens) text << QString::fromStdString(vocabulary.token(id));
      result->tokenText.push_back(text);
    }
    std::shared_ptr<const KvCacheResult> done = result;
    return [this, done] {
      result_ = done;
      message_.clear();
      emit resultChanged();
    };
  });
}

}  // namespace attnlab
