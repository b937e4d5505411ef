#include "next_token_model.h"

#include <algorithm>
#include <stdexcept>

#include "attention_map_model.h"
#include "background_job.h"
#include "head_selection.h"
#include "training_session.h"

namespace attnlab {

// What the generation jobs share: the model they started from, the draws and the settings.
struct NextTokenModel::Generation {
  std::shared_ptr<const ModelSnapshot> model;
  SamplingSettings settings;
  Rng rng;  // touched only by the running chunk, and chunks run one at a time
  int remaining = 0;
  int context = 0;
};

NextTokenModel::NextTokenModel(AttentionMapModel* attention, HeadSelection* selection, TrainingSession* session, QObject* parent)
    : QObject(parent),
      attention_(attention),
      selection_(selection),
      session_(session),
      predictJob_(new BackgroundJob(this)),
      generateJob_(new BackgroundJob(this)) {
  connect(attention_, &AttentionMapModel::mapChanged, this, &NextTokenModel::recompute);
  if (selection_) connect(selection_, &HeadSelection::queryChanged, this, &NextTokenModel::recompute);
  if (session_) connect(session_, &TrainingSession::cleared, this, [this] { endGeneration({}); });
  for (BackgroundJob* job : {predictJob_, generateJob_})
    connect(job, &BackgroundJob::failed, this, [this, job](const QString& message) {
      if (job == generateJob_) endGeneration({});
      message_ = message;
      emit failed(message);
    });
  recompute();
}

bool NextTokenModel::busy() const { return predictJob_->busy() || generateJob_->busy(); }

void NextTokenModel::waitForIdle() {
  while (busy()) {
    generateJob_->waitForIdle();
    predictJob_->waitForIdle();
  }
}

void NextTokenModel::setSettings(const SamplingSettings& settings) {
  if (std::string why = settings.check(); !why.empty()) {
    message_ = QString::fromStdString(why);
    emit failed(message_);
    return;
  }
  settings_ = settings;
  recompute();
}

QString NextTokenModel::visible(const std::string& token) {
  QString text = QString::fromStdString(token);
  if (text.isEmpty()) return QStringLiteral("\u00b7");
  text.replace(QLatin1Char(' '), QChar(0x2423));
  text.replace(QLatin1Char('\n'), QChar(0x21b5));
  text.replace(QLatin1Char('\t'), QChar(0x21e5));
  return text;
}

void NextTokenModel::recompute() {
  const TraceSnapshot* shown = attention_->snapshot();
  if (!shown || shown->trace.tokens.empty() || shown->trace.logits.rows() == 0) {
    predictJob_->cancel();
    prediction_.reset();
    emit predictionChanged();
    return;
  }
  const int rows = static_cast<int>(shown->trace.logits.rows());
  const int query = selection_ ? selection_->query() : -1;
  const int position = query >= 0 && query < rows ? query : rows - 1;
  // One row of logits is copied here (cheap); the softmax, sort and labels run on the worker.
  struct Input {
    Mat row;
    std::shared_ptr<const Vocabulary> vocabulary;
  };
  auto input = std::make_shared<Input>(Input{shown->trace.logits.row(position), shown->vocabulary});
  const SamplingSettings settings = settings_;
  predictJob_->submit([this, input, settings, position]() -> BackgroundJob::Delivery {
    auto made = std::make_shared<NextTokenPrediction>();
    made->position = position;
    made->settings = settings;
    made->distribution = nextTokenDistribution(input->row.data(), static_cast<int>(input->row.cols()), settings);
    const int named = std::min<int>(made->distribution.kept.size(), kMaxLabels);
    for (int i = 0; i < named; ++i) {
      const int token = made->distribution.kept[i].token;
      made->labels << (input->vocabulary && token < input->vocabulary->size() ? visible(input->vocabulary->token(token))
                                                                              : QStringLiteral("#%1").arg(token));
    }
    std::shared_ptr<const NextTokenPrediction> done = made;
    return [this, done] {
      prediction_ = done;
      emit predictionChanged();
    };
  });
}

void NextTokenModel::generate(int count, uint64_t seed) {
  if (generation_) return;
  const TraceSnapshot* shown = attention_->snapshot();
  if (!shown || !shown->model || !shown->model->model || shown->trace.tokens.empty()) {
    message_ = tr("no model yet: train a few steps or open a model first");
    emit failed(message_);
    return;
  }
  auto g = std::make_shared<Generation>();
  g->model = shown->model;
  g->settings = settings_;
  g->rng = Rng(seed);
  g->context = shown->model->model->config().context;
  sequence_ = shown->trace.tokens;
  requested_ = std::max(0, count);
  generated_ = 0;
  g->remaining = std::min(requested_, g->context - static_cast<int>(sequence_.size()));
  if (g->remaining <= 0) {
    message_ = tr("the probe already fills the model's context (%1 tokens)").arg(g->context);
    emit failed(message_);
    return;
  }
  generation_ = g;
  message_.clear();
  emit generationChanged();
  submitChunk();
}

void NextTokenModel::submitChunk() {
  std::shared_ptr<Generation> g = generation_;
  const std::vector<int> start = sequence_;
  const int chunk = std::min(kChunkTokens, g->remaining);
  generateJob_->submit([this, g, start, chunk]() -> BackgroundJob::Delivery {
    std::vector<int> sequence = start;
    generateTokens(*g->model->model, sequence, chunk, g->settings, g->rng, &BackgroundJob::stopRequested);
    return [this, g, sequence = std::move(sequence)] {
      if (g != generation_) return;
      generated_ += static_cast<int>(sequence.size() - sequence_.size());
      g->remaining -= static_cast<int>(sequence.size() - sequence_.size());
      sequence_ = sequence;
      if (session_) session_->setProbe(sequence_);
      if (g->remaining > 0) {
        emit generationChanged();
        return submitChunk();
      }
      endGeneration(generated_ < requested_ ? tr("stopped at the model's context (%1 tokens)").arg(g->context) : QString());
    };
  });
}

void NextTokenModel::cancelGeneration() {
  if (!generation_) return;
  generateJob_->cancel();
  endGeneration(tr("cancelled after %1 of %2 tokens").arg(generated_).arg(requested_));
}

void NextTokenModel::endGeneration(const QString& note) {
  if (!generation_) return;
  generateJob_->cancel();
  generation_.reset();
  message_ = note;
  emit generationChanged();
}

}  // namespace attnlab
