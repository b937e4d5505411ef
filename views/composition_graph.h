#pragma once
// Head composition (engine/interpret/head_composition.h) as a graph: one node per head, a column
// per layer; an edge from an earlier head to a later one for each pair whose Q-, K- or
// V-composition score is at least the threshold, thicker and darker the higher the score. Hover
// a node for its OV copying score and strongest inputs, an edge for its score; click a node to
// select that head. The selected head is ringed.
#include <QWidget>
#include <memory>

#include "interpret/head_composition.h"

namespace attnlab {

enum class CompositionKind { q, k, v };

class CompositionGraph : public QWidget {
  Q_OBJECT
 public:
  explicit CompositionGraph(QWidget* parent = nullptr);
  void setComposition(std::shared_ptr<const HeadComposition> composition, int layers, int heads);
  void setKind(CompositionKind kind);
  void setThreshold(double threshold);
  void setSelected(int layer, int head);
  bool hasData() const { return composition_ != nullptr; }
  // The edges drawn now (score >= threshold of the chosen kind).
  std::vector<const CompositionScore*> shownEdges() const;
  // The threshold at which the strongest `share` of the pairs show (the default on new results).
  double thresholdForShare(double share) const;
  // A node's centre, for tests.
  QPointF nodeCentre(int layer, int head) const;

  static double scoreOf(const CompositionScore& s, CompositionKind kind);

 signals:
  void headClicked(int layer, int head);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;

 private:
  double nodeAreaHeight() const;
  double nodeRadius() const;
  bool nodeAt(QPointF point, int& layer, int& head) const;
  const CompositionScore* edgeAt(QPointF point) const;
  QString nodeText(int layer, int head) const;

  std::shared_ptr<const HeadComposition> composition_;
  int layers_ = 0, heads_ = 0;
  CompositionKind kind_ = CompositionKind::k;
  double threshold_ = 0.3;
  int selectedLayer_ = -1, selectedHead_ = -1;
};

}  // namespace attnlab
