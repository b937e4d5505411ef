#pragma once
// The 3D view's data from the engine's joint query-key embedding (engine/analysis/qk_embedding.h):
// the selected head's queries and keys on the probe, each query carrying the trace's attention
// weights (for its top-k lines) and every point a role read from the same map. Computed on a
// BackgroundJob from the ModelSnapshot of each new trace, and only while active (the tab shown).
#include <QObject>
#include <QString>
#include <memory>
#include <string>
#include <vector>

#include "background_job.h"
#include "core/tensor.h"
#include "qk_embedding_model.h"
#include "snapshots.h"

namespace attnlab {

class HeadSelection;

// Roles from one head's [T, T] map (rows queries, 0 where masked) and the probe's tokens. A query
// is named by the key it weighs most: "query → previous token" (i - 1), "query → induction target"
// (a key j whose previous token equals the query's own token: where an induction head looks),
// "query → itself", "query → first token" (the usual sink), else "query → other", in that order. A key is "key: first token" at
// position 0, else named by the queries that weigh it most: "key: induction target", "key:
// previous token", else "key: other".
struct TokenRoles {
  std::vector<std::string> queries, keys;
};
TokenRoles tokenRoles(const Mat& weights, const std::vector<int>& tokens);

// The embedding of (layer, head) of `model` on `tokens`, with `weights` the head's map on them.
// Axes are oriented so each has positive skew, which keeps them from flipping between steps.
QkEmbeddingData embeddingData(const Model& model, const Vocabulary& vocabulary, const std::vector<int>& tokens,
                              const Mat& weights, int layer, int head);

class QkEmbeddingSource : public QObject {
  Q_OBJECT
 public:
  QkEmbeddingSource(const HeadSelection* selection, QkEmbeddingModel* model, QObject* parent = nullptr);

  // Inactive, new traces are only noted; activating computes the latest if it is not shown yet.
  void setActive(bool active);
  BackgroundJob& job() { return job_; }

 signals:
  void failed(const QString& message);

 private:
  void follow();

  const HeadSelection* selection_;
  QkEmbeddingModel* model_;
  BackgroundJob job_;
  bool active_ = false;
  bool stale_ = true;  // a trace or selection came while inactive
};

}  // namespace attnlab
