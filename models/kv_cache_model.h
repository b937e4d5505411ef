#pragma once
// The KV-cache view's data: a generation through the cache (engine/kv/occupancy_record.h) of a
// model snapshot, computed on a BackgroundJob and held as an immutable result. The prompt is the
// probe, a task example (a validation sequence, whose targets give the teacher-forced loss) or
// typed text; then `tokens` greedy new tokens, under one or several (policy, budget, scope) runs.
#include <QObject>
#include <QString>
#include <QStringList>
#include <memory>
#include <vector>

#include "kv/occupancy_record.h"
#include "snapshots.h"

namespace attnlab {

class BackgroundJob;

struct KvCacheRequest {
  enum class Prompt { Probe, TaskExample, Text };
  std::shared_ptr<const ModelSnapshot> model;
  Prompt prompt = Prompt::Probe;
  std::vector<int> probe;  // the probe's tokens (Prompt::Probe)
  QString text;            // Prompt::Text, encoded with the run's vocabulary
  int tokens = 8;          // greedy new tokens
  std::vector<OccupancyRunSpec> runs;
  bool matched = false;
};

struct KvCacheResult {
  OccupancyRecord record;
  std::vector<QStringList> tokenText;  // [run][step] each run's tokens as text
  int modelStep = 0;                   // the training step of the model that generated
  QString openedName;                  // or the name of the opened model ("" for a lab run)
  QString note;                        // e.g. that the prompt was cut to fit the context
};

class KvCacheModel : public QObject {
  Q_OBJECT
 public:
  explicit KvCacheModel(QObject* parent = nullptr);

  // Builds the prompt (bad text or a missing model: failed() at once, nothing runs) and records
  // the generation on the worker; resultChanged() or failed() follows.
  void run(const KvCacheRequest& request);
  std::shared_ptr<const KvCacheResult> result() const { return result_; }
  QString message() const { return message_; }  // the last failure, "" after a success
  bool busy() const;
  void waitForIdle();
  void clear();

  // Every eviction policy of the engine's registry: name and one-line rule.
  static std::vector<std::pair<QString, QString>> policies();
  // The settings a policy takes, with their defaults and ranges (empty for an unknown name).
  static std::vector<SettingSpec> policySettings(const QString& policy);

 signals:
  void resultChanged();
  void failed(const QString& message);
  void busyChanged(bool busy);

 private:
  void fail(const QString& message);

  BackgroundJob* job_;
  std::shared_ptr<const KvCacheResult> result_;
  QString message_;
};

}  // namespace attnlab
