#pragma once
// The joint query-key embedding in 3D, drawn by VTK (Debian's VTK Qt widget is built for Qt 5, see
// PLATFORM.md): queries are spheres, keys are cubes, coloured as the model says; a thin box marks
// the data's extent. Left drag orbits, right drag (or shift + left) pans, the wheel zooms; hovering
// names the nearest point, clicking a query selects it and draws tubes to its top-k keys (thicker =
// heavier). Needs the default QSurfaceFormat of main.cpp.
//
// VTK draws into a framebuffer object of an offscreen OpenGL context and the widget paints the
// picture read back from it. A QOpenGLWidget would make Qt compose the whole top-level window with
// OpenGL on every repaint of any widget in it, which under a software rasteriser (Xvfb, remote
// desktops) stalled the window for up to seconds; this way only the 3D view's own frames use GL.
#include <QImage>
#include <QPoint>
#include <QWidget>
#include <memory>
#include <optional>
#include <vtkSmartPointer.h>
#include <vector>

#include "qk_embedding_model.h"

class QOffscreenSurface;
class QOpenGLContext;
class QOpenGLFramebufferObject;
class vtkActor;
class vtkGenericOpenGLRenderWindow;
class vtkPolyData;
class vtkRenderer;
class vtkCubeSource;
class vtkSphereSource;
class vtkOutlineSource;

namespace attnlab {

class QkEmbeddingView : public QWidget {
  Q_OBJECT
 public:
  struct Hit {
    QkEmbeddingModel::Kind kind;
    int index = 0;
  };

  explicit QkEmbeddingView(QkEmbeddingModel* model, QWidget* parent = nullptr);
  ~QkEmbeddingView() override;

  // Turns the camera about the data's centre: azimuth about the view-up axis, elevation about the
  // horizontal axis, in degrees. For scripts and the screenshot test; the mouse does the same.
  void rotateCamera(double azimuthDegrees, double elevationDegrees);
  void zoomCamera(double factor);  // > 1 moves closer
  void resetCamera();              // looks at all points from the default direction

  // Where a point is drawn, in widget coordinates (nullopt before the first layout).
  std::optional<QPointF> projected(QkEmbeddingModel::Kind kind, int index) const;
  // The point drawn nearest to `position` within a few pixels, queries before keys on ties.
  std::optional<Hit> pick(const QPoint& position) const;
  QSize sizeHint() const override { return {640, 520}; }
  // The picture as drawn now, in device pixels (rendered first if anything changed); null when
  // OpenGL is not available.
  QImage grabFramebuffer();

 signals:
  void hovered(const QString& description);  // empty when the pointer leaves the points

 protected:
  void paintEvent(QPaintEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void leaveEvent(QEvent* event) override;

 private:
  void rebuildPoints();  // positions and glyph size (new data)
  void recolor();        // colours (new data or setting)
  void rebuildLines();   // the selected query's ring and its top-k tubes
  double glyphSize() const;
  void syncWindowSize() const;  // VTK's window size = the widget's, in device pixels
  void pan(const QPoint& delta);
  void redraw();             // the scene changed: render again at the next paint
  bool makeContextCurrent();  // creates the offscreen context and VTK's GL state the first time
  void render();             // VTK into the framebuffer object, read back into picture_

  QkEmbeddingModel* model_;
  vtkSmartPointer<vtkGenericOpenGLRenderWindow> window_;
  vtkSmartPointer<vtkRenderer> renderer_;
  vtkSmartPointer<vtkPolyData> queryPoints_, keyPoints_;
  vtkSmartPointer<vtkSphereSource> sphere_;
  vtkSmartPointer<vtkCubeSource> cube_;
  vtkSmartPointer<vtkOutlineSource> outline_;
  vtkSmartPointer<vtkActor> queryActor_, keyActor_, outlineActor_, ringActor_;
  std::vector<vtkSmartPointer<vtkActor>> lineActors_;
  double diagonal_ = 1;  // of the data's bounding box

  enum class Drag { None, Orbit, Pan };
  Drag drag_ = Drag::None;
  QPoint lastMouse_, pressMouse_;
  QString hoverText_;

  std::unique_ptr<QOpenGLContext> context_;
  std::unique_ptr<QOffscreenSurface> surface_;
  std::unique_ptr<QOpenGLFramebufferObject> framebuffer_;
  QImage picture_;
  bool stale_ = true;  // the scene or the size changed since picture_ was rendered
  QString unavailable_;  // why the view cannot draw (no OpenGL 3.2 context), painted instead
};

}  // namespace attnlab
