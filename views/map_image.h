#pragma once
// A head's attention map as an image, one pixel per cell (the heatmap and the model view's
// thumbnails scale it up unsmoothed, so every cell stays one colour).
#include <QImage>
#include <algorithm>

class QPainter;
class QRectF;

namespace attnlab {

class AttentionMapModel;

constexpr QRgb kMaskedColour = 0xffe2e2e2;  // masked cells: light grey, off the ramp

// Coloured by the model's ramp position against `top` (the head's own largest weight when
// negative); masked cells kMaskedColour. Null image when the head does not exist.
QImage mapImage(const AttentionMapModel& model, int layer, int head, double top = -1);
// Cells per square's side that let a map of n x n cells fit `room` pixels: 1 when it fits.
inline int cellsPerSquare(int n, int room) { return room >= n ? 1 : (n + std::max(1, room) - 1) / std::max(1, room); }

// The map block by block, one pixel per `block` x `block` cells: each pixel the largest weight of
// its block (so a sharp head stays visible), masked only where the whole block is.
QImage mapBlocks(const AttentionMapModel& model, int layer, int head, int block, double top = -1);
// The same at most `side` pixels wide (blocks as small as that allows; the map itself when it fits).
// A 1,024-token map becomes a thumbnail without colouring a million cells.
QImage mapThumbnail(const AttentionMapModel& model, int layer, int head, int side);

// Draws `cells` (one pixel per cell) stretched over `target`, unsmoothed. Into a vector file
// (SVG) it draws one filled rectangle per pixel instead, so the drawing scales without blurring.
void drawCells(QPainter& painter, const QRectF& target, const QImage& cells);

}  // namespace attnlab
