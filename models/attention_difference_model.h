#pragma once
// Weights of run A minus weights of run B for the selected layer/head on the shared probe: where
// A attends more (positive) or less (negative) than B. Follows both maps live. Only defined when
// both runs show that head on the same probe tokens; otherwise reason() says why not.
// The subtraction is one T x T pass (T <= context), cheap enough for the UI thread.
#include <QColor>
#include <QObject>
#include <QString>
#include <vector>

#include "core/tensor.h"

namespace attnlab {

class HeadSelection;

class AttentionDifferenceModel : public QObject {
  Q_OBJECT
 public:
  explicit AttentionDifferenceModel(QObject* parent = nullptr);

  // The two runs compared, each by its selection beside its map (either may be null); recomputes.
  void setRuns(const HeadSelection* a, const HeadSelection* b);
  const HeadSelection* a() const { return a_; }
  const HeadSelection* b() const { return b_; }

  bool hasDifference() const { return size_ > 0; }
  QString reason() const { return reason_; }  // why there is no difference ("" when there is one)
  int size() const { return size_; }
  int layer() const { return layer_; }
  int head() const { return head_; }
  float difference(int query, int key) const { return difference_(query, key); }
  bool isMasked(int query, int key) const { return masked_[static_cast<size_t>(query) * size_ + key] != 0; }
  float maxAbsDifference() const { return maxAbs_; }
  QString tokenLabel(int position) const;

  // Diverging ramp for a difference d scaled by `top` (> 0): blue for d = -top, white at 0,
  // red for d = +top, clamped beyond.
  static QColor colourFor(double difference, double top);

 signals:
  void differenceChanged();

 private:
  void recompute();

  const HeadSelection* a_ = nullptr;
  const HeadSelection* b_ = nullptr;
  std::vector<QMetaObject::Connection> connections_;
  Mat difference_;
  std::vector<char> masked_;  // masked in either run
  int size_ = 0;
  int layer_ = 0, head_ = 0;
  float maxAbs_ = 0;
  QString reason_;
};

}  // namespace attnlab
