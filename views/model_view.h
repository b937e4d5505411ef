#pragma once
// Every layer x head at once as small heatmaps (rows: layers, columns: heads), live while
// training, like BertViz's model view. Clicking one selects it in every view.
#include <QImage>
#include <QWidget>
#include <map>

#include "view_context.h"
#include "view_export.h"

namespace attnlab {

class BackgroundJob;
struct TraceSnapshot;

class AttentionMapModel;
class HeadSelection;

class ModelView : public QWidget, public ExportableView {
  Q_OBJECT
 public:
  explicit ModelView(const ViewContext& context, QWidget* parent = nullptr);

  // Where the thumbnail of (layer, head) is drawn (empty when it does not exist).
  QRect thumbnailRect(int layer, int head) const;
  // The (layer, head) under `point`, or {-1, -1}.
  std::pair<int, int> headAt(const QPoint& point) const;
  QSize sizeHint() const override { return {640, 480}; }
  // Blocks until the thumbnails of a long probe (made on a worker) are drawn: captures, benchmarks.
  void settle();

  QString exportName() const override { return QStringLiteral("model-view"); }
  QWidget* exportWidget() override { return this; }
  bool hasExportData() const override;
  void writeCsv(QTextStream& out) const override;

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  bool event(QEvent* event) override;
  void contextMenuEvent(QContextMenuEvent* event) override;

 private:
  struct Geometry {
    QPoint origin;   // top-left of the first thumbnail
    int side = 0;    // thumbnail side, pixels
    int pitch = 0;   // side + gap
    int heads = 0;
  };
  Geometry geometry() const;
  static constexpr int kDirectCells = 256;  // maps up to this many tokens are drawn from the trace at once
  QImage thumbnail(int layer, int head, int side);
  void requestThumbnails(int side);

  const AttentionMapModel* model_;
  HeadSelection* selection_;
  BackgroundJob* thumbnailJob_;
  std::map<std::pair<int, int>, QImage> thumbnails_;  // (layer, head) of a long probe, at thumbnailSide_
  int thumbnailSide_ = 0;
  const TraceSnapshot* thumbnailTrace_ = nullptr;    // the trace they were asked for
};

}  // namespace attnlab
