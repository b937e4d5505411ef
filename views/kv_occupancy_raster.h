#pragma once
// One layer / KV head of a KV-cache generation as a raster: decoding step across, token position
// down, one cell per (step, position) coloured by its state (live, evicted at this step with a
// colour per rule, evicted earlier, sink, kept by the learned gate, not yet generated). Token text
// runs down the left side, a line marks where the prompt ends, a legend sits underneath, and
// hovering a cell names it.
#include <QColor>
#include <QWidget>
#include <memory>

#include "kv/occupancy_record.h"

namespace attnlab {

struct KvCacheResult;

class KvOccupancyRaster : public QWidget {
  Q_OBJECT
 public:
  explicit KvOccupancyRaster(QWidget* parent = nullptr);

  // Shows run `run`, layer `layer`, KV head `kvHead` of `result` (null: nothing to show).
  void show(std::shared_ptr<const KvCacheResult> result, int run, int layer, int kvHead);
  void setEmptyText(const QString& text);  // shown while there is no raster

  static QColor stateColour(CellState state);
  static QColor ruleColour(int rule);
  static QString stateName(CellState state);
  // What a cell holds, for the tooltip and the CSV: "" outside the raster.
  QString describeCell(int step, int position) const;

  QSize minimumSizeHint() const override { return {320, 260}; }

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;

 private:
  struct Layout {
    QRect cells;       // the raster itself
    double cell = 1;   // cell size in pixels
    int labelWidth = 0;
    QRect legend;
  };
  struct LegendItem {
    QColor colour;
    QString text;
  };
  bool hasRaster() const;
  const HeadRaster& raster() const;
  std::vector<LegendItem> legendItems() const;
  int legendHeight(int width) const;
  Layout layout() const;

  std::shared_ptr<const KvCacheResult> result_;
  int run_ = 0, layer_ = 0, kvHead_ = 0;
  QString emptyText_;
};

}  // namespace attnlab
