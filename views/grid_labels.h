#pragma once
// Token labels around a square query x key grid (the attention heatmap, the difference map):
// query labels right-aligned left of the rows, key labels rotated to read upwards above the
// columns, elided to a common width and thinned so they never overlap.
#include <QRect>
#include <QString>
#include <functional>

class QFont;
class QFontMetrics;
class QPainter;

namespace attnlab {

// Width of the widest of `n` labels, at most `maxChars` 'M's.
int labelBandWidth(const QFontMetrics& fm, int n, const std::function<QString(int)>& label, int maxChars);
// Every how many cells a label fits, for cells `cell` pixels high.
int labelStride(const QFontMetrics& fm, int cell);

struct GridLabelLayout {
  QRect grid;      // all cells
  int cell = 0;    // side of one cell, pixels
  int width = 0;   // room for a label (labelBandWidth)
  int left = 0;    // x where the query labels start
  int every = 1;   // labelStride
  int gap = 0;     // between the key labels and the grid
};

// Draws the labels of positions 0 .. n-1 in `font` with the painter's current pen.
void paintGridLabels(QPainter& painter, const QFont& font, int n, const std::function<QString(int)>& label,
                     const GridLabelLayout& layout);

}  // namespace attnlab
