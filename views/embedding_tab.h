#pragma once
// The "Embedding 3D" tab: the joint query-key embedding panel (VTK) of the shared selected head on
// the probe, computed by a QkEmbeddingSource while the tab is shown. PNG export grabs the rendered
// picture with the panel's text; SVG holds the same picture as an image (a 3D scene has no vector form).
// The OpenGL panel is made when the tab is first shown, and only if OpenGL works on the display:
// a window holding an OpenGL widget composes through OpenGL, which a display without it (Qt's
// offscreen platform) cannot do; there the tab says so instead.
#include <QWidget>

#include "view_context.h"
#include "view_export.h"

class QLabel;

namespace attnlab {

class AttentionMapModel;
class QkEmbeddingModel;
class QkEmbeddingPanel;
class QkEmbeddingSource;
class TrainingSession;

class EmbeddingTab : public QWidget, public ExportableView {
  Q_OBJECT
 public:
  // Everything comes from the context's traces and their model snapshots.
  explicit EmbeddingTab(const ViewContext& context, QWidget* parent = nullptr);

  QkEmbeddingModel* model() const { return model_; }
  QkEmbeddingPanel* panel() const { return panel_; }  // null until shown, or without OpenGL
  QkEmbeddingSource* source() const { return source_; }
  // Blocks until the embedding of the latest trace is computed and handed to the view.
  void waitForResults();

  QString exportName() const override;
  QWidget* exportWidget() override { return this; }
  bool hasExportData() const override;
  void writeCsv(QTextStream& out) const override;

 protected:
  void showEvent(QShowEvent* event) override;
  void hideEvent(QHideEvent* event) override;
  void contextMenuEvent(QContextMenuEvent* event) override;

 private:
  QkEmbeddingModel* model_;
  QkEmbeddingSource* source_;
  QkEmbeddingPanel* panel_ = nullptr;
  QLabel* notice_;  // before the first show, or the reason there is no 3D view
  QLabel* error_;
};

}  // namespace attnlab
