#pragma once
// BertViz-style head view: the probe's tokens in two columns (queries left, keys right) and a
// line from each query to every key it attends to, as opaque as the weight, one colour per head.
// Several heads of the selected layer can be shown at once; hovering a token keeps only its lines.
#include <QWidget>
#include <vector>

#include "view_context.h"
#include "view_export.h"

class QCheckBox;
class QHBoxLayout;

namespace attnlab {

class AttentionMapModel;
class HeadSelection;

struct AttentionLine {
  int head = 0;
  int query = 0;
  int key = 0;
  float weight = 0;
};

// Lines of `heads` in `layer` whose weight is at least `threshold` (masked entries never), in
// head, query, key order. `onlyQuery` / `onlyKey` >= 0 keep the lines of that token;
// `maxPerQuery` > 0 keeps only that many strongest keys of each query.
std::vector<AttentionLine> attentionLines(const AttentionMapModel& model, int layer, const std::vector<int>& heads,
                                          float threshold, int onlyQuery = -1, int onlyKey = -1, int maxPerQuery = 0);

// The drawing (tokens, lines and a legend of head colours): what is exported as a picture.
class HeadLinesCanvas : public QWidget {
  Q_OBJECT
 public:
  static constexpr float kThreshold = 0.02f;  // thinner lines are clutter, not information
  static constexpr int kMaxKeysPerQuery = 8;  // long probes stay readable (and fast to draw)

  HeadLinesCanvas(const AttentionMapModel* model, const HeadSelection* selection, QWidget* parent = nullptr);
  void setHeads(std::vector<int> heads);
  const std::vector<int>& heads() const { return heads_; }
  // Centre of a token's label: queries on the left (`key` false), keys on the right.
  QPoint tokenAnchor(int position, bool key) const;
  QSize sizeHint() const override { return {600, 600}; }

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void leaveEvent(QEvent* event) override;

 private:
  struct Geometry {
    int top = 0, rowHeight = 0;
    int queryRight = 0, keyLeft = 0;  // x of the label edges the lines start and end at
    int labelWidth = 0;
    QFont font;
  };
  Geometry geometry() const;

  const AttentionMapModel* model_;
  const HeadSelection* selection_;
  std::vector<int> heads_;
  int hoverQuery_ = -1;
  int hoverKey_ = -1;
};

class HeadView : public QWidget, public ExportableView {
  Q_OBJECT
 public:
  explicit HeadView(const ViewContext& context, QWidget* parent = nullptr);

  HeadLinesCanvas* canvas() const { return canvas_; }

  QString exportName() const override;
  QWidget* exportWidget() override { return canvas_; }
  bool hasExportData() const override;
  void writeCsv(QTextStream& out) const override;

 protected:
  void contextMenuEvent(QContextMenuEvent* event) override;

 private:
  void syncHeadBoxes();
  void applyBoxes();

  AttentionMapModel* model_;
  HeadSelection* selection_;
  HeadLinesCanvas* canvas_;
  QHBoxLayout* boxRow_;
  std::vector<QCheckBox*> boxes_;
  int shownLayer_ = -1;
  int shownHead_ = -1;
};

}  // namespace attnlab
