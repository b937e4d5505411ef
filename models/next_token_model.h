#pragma once
// The next-token view's data: the distribution of the token after one position of the latest
// probe trace (the selected query, else the last token), from the trace's own logits through
// engine/sample/next_token.h with the chosen temperature, top-k and top-p; and generation, which
// continues the probe a few tokens per job on a worker and hands each chunk to the run's session
// as the new probe, until the count is reached, the context is full or it is cancelled.
#include <QObject>
#include <QString>
#include <QStringList>
#include <memory>
#include <vector>

#include "sample/next_token.h"
#include "snapshots.h"

namespace attnlab {

class AttentionMapModel;
class BackgroundJob;
class HeadSelection;
class TrainingSession;

struct NextTokenPrediction {
  int position = 0;               // the distribution is of the token after this one
  SamplingSettings settings;
  NextTokenDistribution distribution;
  QStringList labels;             // per kept token (the first kMaxLabels), blanks made visible
};

class NextTokenModel : public QObject {
  Q_OBJECT
 public:
  static constexpr int kMaxLabels = 200;   // kept tokens named; the rest are counted
  static constexpr int kChunkTokens = 4;   // tokens per generation job, each chunk shown as it comes

  NextTokenModel(AttentionMapModel* attention, HeadSelection* selection, TrainingSession* session, QObject* parent = nullptr);

  const SamplingSettings& settings() const { return settings_; }
  void setSettings(const SamplingSettings& settings);  // recomputes the distribution
  std::shared_ptr<const NextTokenPrediction> prediction() const { return prediction_; }
  QString message() const { return message_; }  // the last failure or note, "" when none

  // Appends `count` tokens to the probe (greedy or sampled as settings() say, the draws seeded by
  // `seed`), from the model of the trace on display. Ignored while a generation runs.
  void generate(int count, uint64_t seed);
  void cancelGeneration();
  bool generating() const { return generation_ != nullptr; }
  int generated() const { return generated_; }     // tokens appended by the current or last generation
  int requested() const { return requested_; }
  std::vector<int> generatedSequence() const { return sequence_; }  // the probe with them

  bool busy() const;
  void waitForIdle();  // for tests and captures: the distribution and any generation are done

 signals:
  void predictionChanged();
  void generationChanged();  // started, a chunk arrived, or ended
  void failed(const QString& message);

 private:
  struct Generation;
  void recompute();
  void submitChunk();
  void endGeneration(const QString& note);
  static QString visible(const std::string& token);

  AttentionMapModel* attention_;
  HeadSelection* selection_;
  TrainingSession* session_;
  BackgroundJob* predictJob_;
  BackgroundJob* generateJob_;
  SamplingSettings settings_;
  std::shared_ptr<const NextTokenPrediction> prediction_;
  QString message_;
  std::shared_ptr<Generation> generation_;
  std::vector<int> sequence_;
  int generated_ = 0, requested_ = 0;
};

}  // namespace attnlab
