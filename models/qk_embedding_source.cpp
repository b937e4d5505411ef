#include "qk_embedding_source.h"

#include <algorithm>

#include "analysis/qk_embedding.h"
#include "head_selection.h"

namespace attnlab {

namespace {

// The visible key (weight > 0; the earliest on ties) row `query` weighs most, -1 when none.
int topKey(const Mat& weights, int query) {
  int best = -1;
  for (int key = 0; key <= query && key < weights.cols(); ++key)
    if (weights(query, key) > 0 && (best < 0 || weights(query, key) > weights(query, best))) best = key;
  return best;
}

}  // namespace

TokenRoles tokenRoles(const Mat& weights, const std::vector<int>& tokens) {
  const int T = static_cast<int>(tokens.size());
  TokenRoles roles;
  enum Pick { None, Previous, Induction, Other };
  std::vector<Pick> pickedBy(T, None);  // the strongest reason any query picks the key
  for (int i = 0; i < T; ++i) {
    const int j = i < weights.rows() ? topKey(weights, i) : -1;
    Pick pick = Other;
    if (j >= 0 && j == i - 1) {
      roles.queries.push_back("query \u2192 previous token");
      pick = Previous;
    } else if (j >= 1 && j < i && tokens[j - 1] == tokens[i]) {
      roles.queries.push_back("query \u2192 induction target");
      pick = Induction;
    } else if (j == i) {
      roles.queries.push_back("query \u2192 itself");
    } else if (j == 0) {
      roles.queries.push_back("query \u2192 first token");
    } else {
      roles.queries.push_back("query \u2192 other");
    }
    if (j >= 0) pickedBy[j] = std::max(pickedBy[j], pick, [](Pick a, Pick b) {
      auto rank = [](Pick p) { return p == Induction ? 3 : p == Previous ? 2 : p == Other ? 1 : 0; };
      return rank(a) < rank(b);
    });
  }
  for (int j = 0; j < T; ++j)
    roles.keys.push_back(j == 0                        ? "key: first token"
                         : pickedBy[j] == Induction   ? "key: induction target"
                         : pickedBy[j] == Previous    ? "key: previous token"
                                                      : "key: other");
  return roles;
}

QkEmbeddingData embeddingData(const Model& model, const Vocabulary& vocabulary, const std::vector<int>& tokens,
                              const Mat& weights, int layer, int head) {
  const QkEmbedding e = qkEmbedding(model, vocabulary, {tokens}, layer, head);
  const TokenRoles roles = tokenRoles(weights, tokens);
  double skew[3] = {0, 0, 0};
  for (const EmbeddedPoint& p : e.points) {
    skew[0] += p.x * p.x * p.x;
    skew[1] += p.y * p.y * p.y;
    skew[2] += p.z * p.z * p.z;
  }
  QkEmbeddingData data;
  data.layer = layer;
  data.head = head;
  data.dotDistanceCorrelation = e.correlation_normalised;
  for (const EmbeddedPoint& p : e.points) {
    const QVector3D at(skew[0] < 0 ? -p.x : p.x, skew[1] < 0 ? -p.y : p.y, skew[2] < 0 ? -p.z : p.z);
    const std::string& role = p.query ? roles.queries.at(p.position) : roles.keys.at(p.position);
    (p.query ? data.queries : data.keys).push_back({at, p.sequence, p.position, p.label, role});
  }
  // Points come per position, query before key, so query i and key i are both position i.
  for (int i = 0; i < static_cast<int>(data.queries.size()); ++i) {
    std::vector<KeyWeight> row;
    for (int j = 0; j <= i && i < weights.rows() && j < weights.cols(); ++j)
      if (weights(i, j) > 0) row.push_back({j, weights(i, j)});
    data.attention.push_back(std::move(row));
  }
  return data;
}

QkEmbeddingSource::QkEmbeddingSource(const HeadSelection* selection, QkEmbeddingModel* model, QObject* parent)
    : QObject(parent), selection_(selection), model_(model) {
  connect(selection_->map(), &AttentionMapModel::mapChanged, this, &QkEmbeddingSource::follow);
  connect(selection_, &HeadSelection::headChanged, this, &QkEmbeddingSource::follow);
  connect(&job_, &BackgroundJob::failed, this, &QkEmbeddingSource::failed);
}

void QkEmbeddingSource::setActive(bool active) {
  active_ = active;
  if (active_ && stale_) follow();
}

void QkEmbeddingSource::follow() {
  const TraceSnapshot* trace = selection_->map()->snapshot();
  if (!trace || !trace->model || !selection_->map()->hasMap()) {
    job_.cancel();
    if (model_->hasData()) model_->setData(nullptr);
    return;
  }
  stale_ = !active_;
  if (stale_) return;
  const int layer = selection_->layer(), head = selection_->head();
  // Copied on the UI thread: the job must not read the trace, which a newer one may replace.
  const std::shared_ptr<const ModelSnapshot> snapshot = trace->model;
  std::vector<int> tokens = trace->trace.tokens;
  Mat weights = trace->trace.layers.at(layer).heads.at(head).weights;
  job_.submit([this, snapshot, tokens = std::move(tokens), weights = std::move(weights), layer, head] {
    auto data = std::make_shared<const QkEmbeddingData>(
        embeddingData(*snapshot->model, *snapshot->run->vocabulary, tokens, weights, layer, head));
    return [this, data] { model_->setData(data); };
  });
}

}  // namespace attnlab
