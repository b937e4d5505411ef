#include "qk_embedding_view.h"

#include <QMouseEvent>
#include <QOffscreenSurface>
#include <QOpenGLContext>
#include <QOpenGLFramebufferObject>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>
#include <vtkActor.h>
#include <vtkCamera.h>
#include <vtkCubeSource.h>
#include <vtkGenericOpenGLRenderWindow.h>
#include <vtkGlyph3DMapper.h>
#include <vtkLineSource.h>
#include <vtkOpenGLState.h>
#include <vtkOutlineSource.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkPolyDataMapper.h>
#include <vtkProperty.h>
#include <vtkRenderer.h>
#include <vtkSphereSource.h>
#include <vtkTubeFilter.h>
#include <vtkUnsignedCharArray.h>

#include "colormap.h"
#include "palette.h"

namespace attnlab {

namespace {

using Kind = QkEmbeddingModel::Kind;

constexpr double kPickRadius = 9;  // pixels
constexpr double kOrbitDegreesPerPixel = 0.4;

vtkSmartPointer<vtkPolyData> pointsOf(const QkEmbeddingModel& model, Kind kind) {
  auto points = vtkSmartPointer<vtkPoints>::New();
  for (int i = 0; i < model.count(kind); ++i) {
    const QVector3D& p = model.token(kind, i).point;
    points->InsertNextPoint(p.x(), p.y(), p.z());
  }
  auto data = vtkSmartPointer<vtkPolyData>::New();
  data->SetPoints(points);
  return data;
}

vtkSmartPointer<vtkActor> glyphActor(vtkPolyData* points, vtkAlgorithm* shape) {
  auto mapper = vtkSmartPointer<vtkGlyph3DMapper>::New();
  mapper->SetInputData(points);
  mapper->SetSourceConnection(shape->GetOutputPort());
  mapper->ScalingOff();
  mapper->SetScalarModeToUsePointData();
  mapper->SetColorModeToDirectScalars();
  auto actor = vtkSmartPointer<vtkActor>::New();
  actor->SetMapper(mapper);
  actor->GetProperty()->SetSpecular(0.2);
  return actor;
}

void setColor(vtkActor* actor, const QColor& color) {
  actor->GetProperty()->SetColor(color.redF(), color.greenF(), color.blueF());
}

}  // namespace

QkEmbeddingView::QkEmbeddingView(QkEmbeddingModel* model, QWidget* parent)
    : QWidget(parent),
      model_(model),
      window_(vtkSmartPointer<vtkGenericOpenGLRenderWindow>::New()),
      renderer_(vtkSmartPointer<vtkRenderer>::New()),
      sphere_(vtkSmartPointer<vtkSphereSource>::New()),
      cube_(vtkSmartPointer<vtkCubeSource>::New()),
      outline_(vtkSmartPointer<vtkOutlineSource>::New()) {
  setMouseTracking(true);
  setMinimumSize(240, 200);
  setAttribute(Qt::WA_OpaquePaintEvent);  // the picture covers every pixel
  window_->AddRenderer(renderer_);
  renderer_->SetBackground(1, 1, 1);
  renderer_->SetBackgroundAlpha(1);  // else Qt composes the cleared pixels as see-through
  sphere_->SetThetaResolution(16);
  sphere_->SetPhiResolution(12);

  auto outlineMapper = vtkSmartPointer<vtkPolyDataMapper>::New();
  outlineMapper->SetInputConnection(outline_->GetOutputPort());
  outlineActor_ = vtkSmartPointer<vtkActor>::New();
  outlineActor_->SetMapper(outlineMapper);
  setColor(outlineActor_, QColor(170, 170, 170));
  outlineActor_->PickableOff();
  renderer_->AddActor(outlineActor_);

  connect(model_, &QkEmbeddingModel::dataChanged, this, [this] {
    // The same probe at a later step keeps the user's camera; other points get the default one.
    const bool samePoints = queryPoints_ && model_->count(Kind::Query) == queryPoints_->GetNumberOfPoints() &&
                            model_->count(Kind::Key) == keyPoints_->GetNumberOfPoints();
    rebuildPoints();
    if (samePoints)
      redraw();
    else
      resetCamera();
  });
  connect(model_, &QkEmbeddingModel::colorsChanged, this, [this] {
    recolor();
    redraw();
  });
  connect(model_, &QkEmbeddingModel::selectionChanged, this, [this] {
    rebuildLines();
    redraw();
  });
  rebuildPoints();
  resetCamera();
}

QkEmbeddingView::~QkEmbeddingView() {
  if (!context_ || !context_->makeCurrent(surface_.get())) return;  // never drawn: no GL resources
  // Release VTK's and the framebuffer's GL resources while their context still exists.
  window_->Finalize();
  framebuffer_.reset();
  context_->doneCurrent();
}

double QkEmbeddingView::glyphSize() const { return diagonal_ * 0.018; }

void QkEmbeddingView::rebuildPoints() {
  if (queryActor_) renderer_->RemoveActor(queryActor_);
  if (keyActor_) renderer_->RemoveActor(keyActor_);
  queryActor_ = keyActor_ = nullptr;
  if (!model_->hasData()) {
    outlineActor_->VisibilityOff();
    rebuildLines();
    return;
  }
  queryPoints_ = pointsOf(*model_, Kind::Query);
  keyPoints_ = pointsOf(*model_, Kind::Key);
  double bounds[6] = {1e300, -1e300, 1e300, -1e300, 1e300, -1e300};
  for (vtkPolyData* data : {queryPoints_.Get(), keyPoints_.Get()}) {
    if (data->GetNumberOfPoints() == 0) continue;
    double b[6];
    data->GetPoints()->GetBounds(b);
    for (int i = 0; i < 6; i += 2) {
      bounds[i] = std::min(bounds[i], b[i]);
      bounds[i + 1] = std::max(bounds[i + 1], b[i + 1]);
    }
  }
  diagonal_ = std::hypot(bounds[1] - bounds[0], bounds[3] - bounds[2], bounds[5] - bounds[4]);
  if (!(diagonal_ > 0)) diagonal_ = 1;
  outline_->SetBounds(bounds);
  outlineActor_->VisibilityOn();

  const double size = glyphSize();
  sphere_->SetRadius(size * 0.55);
  cube_->SetXLength(size * 0.85);
  cube_->SetYLength(size * 0.85);
  cube_->SetZLength(size * 0.85);
  queryActor_ = glyphActor(queryPoints_, sphere_);
  keyActor_ = glyphActor(keyPoints_, cube_);
  keyActor_->GetProperty()->EdgeVisibilityOn();  // outlined cubes read as keys even when small
  keyActor_->GetProperty()->SetEdgeColor(0.15, 0.15, 0.15);
  renderer_->AddActor(queryActor_);
  renderer_->AddActor(keyActor_);
  recolor();
  rebuildLines();
}

void QkEmbeddingView::recolor() {
  if (!model_->hasData()) return;
  for (Kind kind : {Kind::Query, Kind::Key}) {
    auto colors = vtkSmartPointer<vtkUnsignedCharArray>::New();
    colors->SetName("colors");
    colors->SetNumberOfComponents(3);
    for (int i = 0; i < model_->count(kind); ++i) {
      const QColor c = model_->colorBy() == QkEmbeddingModel::ColorBy::Position ? rampColor(model_->shade(kind, i))
                                                                                : categoryColor(model_->category(kind, i));
      const unsigned char rgb[3] = {static_cast<unsigned char>(c.red()), static_cast<unsigned char>(c.green()),
                                    static_cast<unsigned char>(c.blue())};
      colors->InsertNextTypedTuple(rgb);
    }
    vtkPolyData* data = kind == Kind::Query ? queryPoints_ : keyPoints_;
    data->GetPointData()->SetScalars(colors);
    data->Modified();
  }
}

void QkEmbeddingView::rebuildLines() {
  for (auto& actor : lineActors_) renderer_->RemoveActor(actor);
  lineActors_.clear();
  if (ringActor_) renderer_->RemoveActor(ringActor_);
  ringActor_ = nullptr;
  const int query = model_->selectedQuery();
  if (query < 0) return;

  const QVector3D& q = model_->token(Kind::Query, query).point;
  auto ring = vtkSmartPointer<vtkSphereSource>::New();  // a wire cage marks the selected query
  ring->SetCenter(q.x(), q.y(), q.z());
  ring->SetRadius(glyphSize() * 1.3);
  ring->SetThetaResolution(12);
  ring->SetPhiResolution(8);
  auto ringMapper = vtkSmartPointer<vtkPolyDataMapper>::New();
  ringMapper->SetInputConnection(ring->GetOutputPort());
  ringActor_ = vtkSmartPointer<vtkActor>::New();
  ringActor_->SetMapper(ringMapper);
  ringActor_->GetProperty()->SetRepresentationToWireframe();
  setColor(ringActor_, QColor(20, 20, 20));
  renderer_->AddActor(ringActor_);

  // Tubes rather than GL lines: their thickness is in world units, so it scales with zoom and
  // does not depend on the driver's line-width limits.
  for (const QkEmbeddingModel::Line& line : model_->selectedLines()) {
    const QVector3D& k = model_->token(Kind::Key, line.key).point;
    auto segment = vtkSmartPointer<vtkLineSource>::New();
    segment->SetPoint1(q.x(), q.y(), q.z());
    segment->SetPoint2(k.x(), k.y(), k.z());
    auto tube = vtkSmartPointer<vtkTubeFilter>::New();
    tube->SetInputConnection(segment->GetOutputPort());
    tube->SetRadius(glyphSize() * 0.06 * line.width);
    tube->SetNumberOfSides(10);
    auto mapper = vtkSmartPointer<vtkPolyDataMapper>::New();
    mapper->SetInputConnection(tube->GetOutputPort());
    auto actor = vtkSmartPointer<vtkActor>::New();
    actor->SetMapper(mapper);
    setColor(actor, QColor(200, 40, 40));
    renderer_->AddActor(actor);
    lineActors_.push_back(actor);
  }
}

void QkEmbeddingView::resetCamera() {
  vtkCamera* camera = renderer_->GetActiveCamera();
  camera->SetFocalPoint(0, 0, 0);
  camera->SetPosition(0, 0, 1);
  camera->SetViewUp(0, 1, 0);
  camera->Azimuth(30);
  camera->Elevation(20);
  camera->OrthogonalizeViewUp();
  renderer_->ResetCamera();
  renderer_->ResetCameraClippingRange();
  redraw();
}

void QkEmbeddingView::rotateCamera(double azimuthDegrees, double elevationDegrees) {
  vtkCamera* camera = renderer_->GetActiveCamera();
  camera->Azimuth(azimuthDegrees);
  camera->Elevation(elevationDegrees);
  camera->OrthogonalizeViewUp();
  renderer_->ResetCameraClippingRange();
  redraw();
}

void QkEmbeddingView::zoomCamera(double factor) {
  if (!(factor > 0)) return;
  renderer_->GetActiveCamera()->Dolly(factor);
  renderer_->ResetCameraClippingRange();
  redraw();
}

void QkEmbeddingView::pan(const QPoint& delta) {
  vtkCamera* camera = renderer_->GetActiveCamera();
  const double distance = camera->GetDistance();
  const double worldPerPixel = 2 * distance * std::tan(camera->GetViewAngle() * M_PI / 360) / std::max(1, height());
  double up[3], right[3], forward[3];
  camera->GetViewUp(up);
  camera->GetDirectionOfProjection(forward);
  right[0] = forward[1] * up[2] - forward[2] * up[1];
  right[1] = forward[2] * up[0] - forward[0] * up[2];
  right[2] = forward[0] * up[1] - forward[1] * up[0];
  double focal[3], position[3];
  camera->GetFocalPoint(focal);
  camera->GetPosition(position);
  for (int i = 0; i < 3; ++i) {
    const double shift = (-delta.x() * right[i] + delta.y() * up[i]) * worldPerPixel;
    focal[i] += shift;
    position[i] += shift;
  }
  camera->SetFocalPoint(focal);
  camera->SetPosition(position);
  redraw();
}

std::optional<QPointF> QkEmbeddingView::projected(Kind kind, int index) const {
  if (width() <= 0 || height() <= 0 || index < 0 || index >= model_->count(kind)) return std::nullopt;
  const QVector3D& p = model_->token(kind, index).point;
  // The renderer projects with the window's size; keep it in step with the widget even before
  // the first paint (the tests ask before anything is shown).
  syncWindowSize();
  renderer_->SetWorldPoint(p.x(), p.y(), p.z(), 1);
  renderer_->WorldToDisplay();
  double display[3];
  renderer_->GetDisplayPoint(display);
  const qreal ratio = devicePixelRatioF();  // display is in device pixels, y running up
  return QPointF(display[0] / ratio, height() - display[1] / ratio);
}

void QkEmbeddingView::syncWindowSize() const {
  const qreal ratio = devicePixelRatioF();
  const int w = int(width() * ratio), h = int(height() * ratio);
  const int* size = window_->GetSize();
  if (size[0] != w || size[1] != h) window_->SetSize(w, h);
}

std::optional<QkEmbeddingView::Hit> QkEmbeddingView::pick(const QPoint& position) const {
  std::optional<Hit> best;
  double bestDistance = kPickRadius;
  for (Kind kind : {Kind::Query, Kind::Key})
    for (int i = 0; i < model_->count(kind); ++i)
      if (auto at = projected(kind, i)) {
        const double distance = std::hypot(at->x() - position.x(), at->y() - position.y());
        if (distance < bestDistance) {
          bestDistance = distance;
          best = Hit{kind, i};
        }
      }
  return best;
}

void QkEmbeddingView::redraw() {
  stale_ = true;
  update();
}

bool QkEmbeddingView::makeContextCurrent() {
  if (context_) return context_->makeCurrent(surface_.get());
  if (!unavailable_.isEmpty()) return false;  // tried once and failed: say so, do not retry each paint
  auto context = std::make_unique<QOpenGLContext>();
  context->setFormat(QSurfaceFormat::defaultFormat());
  auto surface = std::make_unique<QOffscreenSurface>();
  if (context->create()) {
    surface->setFormat(context->format());
    surface->create();
  }
  const QSurfaceFormat format = context->format();
  if (!context->isValid() || !surface->isValid() || format.version() < qMakePair(3, 2) ||
      !context->makeCurrent(surface.get())) {
    unavailable_ = tr("The 3D view needs OpenGL 3.2, which this display does not offer.");
    return false;
  }
  context_ = std::move(context);
  surface_ = std::move(surface);
  window_->SetOwnContext(false);
  window_->SetFrameBlitModeToBlitToCurrent();  // into our framebuffer object, bound in render()
  window_->SetMultiSamples(0);
  window_->OpenGLInitContext();
  return true;
}

void QkEmbeddingView::render() {
  stale_ = false;
  if (!makeContextCurrent()) {
    picture_ = QImage();
    return;
  }
  const qreal ratio = devicePixelRatioF();
  const QSize size(std::max(1, int(width() * ratio)), std::max(1, int(height() * ratio)));
  if (!framebuffer_ || framebuffer_->size() != size)
    framebuffer_ = std::make_unique<QOpenGLFramebufferObject>(size, QOpenGLFramebufferObject::CombinedDepthStencil);
  framebuffer_->bind();
  syncWindowSize();
  // Qt touches GL state between frames; VTK caches it, so start from what is really there.
  window_->GetState()->Reset();
  window_->GetState()->Push();
  window_->SetReadyForRendering(true);
  window_->SetIsCurrent(true);
  window_->Render();
  window_->SetIsCurrent(false);
  window_->SetReadyForRendering(false);
  window_->GetState()->Pop();
  framebuffer_->release();
  picture_ = framebuffer_->toImage();
  picture_.setDevicePixelRatio(ratio);
  context_->doneCurrent();
}

QImage QkEmbeddingView::grabFramebuffer() {
  if (stale_ || picture_.isNull()) render();
  return picture_;
}

void QkEmbeddingView::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  stale_ = true;
}

void QkEmbeddingView::paintEvent(QPaintEvent*) {
  if (stale_) render();
  QPainter painter(this);
  if (picture_.isNull()) {
    painter.fillRect(rect(), palette().window());
    painter.drawText(rect().adjusted(12, 12, -12, -12), Qt::AlignCenter | Qt::TextWordWrap, unavailable_);
    return;
  }
  painter.drawImage(QPoint(0, 0), picture_);
}

void QkEmbeddingView::mousePressEvent(QMouseEvent* event) {
  lastMouse_ = pressMouse_ = event->position().toPoint();
  const bool panning = event->button() == Qt::RightButton || event->button() == Qt::MiddleButton ||
                       (event->button() == Qt::LeftButton && (event->modifiers() & Qt::ShiftModifier));
  drag_ = panning ? Drag::Pan : event->button() == Qt::LeftButton ? Drag::Orbit : Drag::None;
}

void QkEmbeddingView::mouseMoveEvent(QMouseEvent* event) {
  const QPoint at = event->position().toPoint();
  const QPoint delta = at - lastMouse_;
  lastMouse_ = at;
  if (drag_ == Drag::Orbit) {
    rotateCamera(-delta.x() * kOrbitDegreesPerPixel, delta.y() * kOrbitDegreesPerPixel);
    return;
  }
  if (drag_ == Drag::Pan) {
    pan(delta);
    return;
  }
  const auto hit = pick(at);
  const QString text = hit ? model_->describe(hit->kind, hit->index) : QString();
  if (text == hoverText_) return;
  hoverText_ = text;
  if (text.isEmpty())
    QToolTip::hideText();
  else
    QToolTip::showText(event->globalPosition().toPoint(), text, this);
  emit hovered(text);
}

void QkEmbeddingView::mouseReleaseEvent(QMouseEvent* event) {
  const bool click = (event->position().toPoint() - pressMouse_).manhattanLength() < 4;
  if (click && drag_ == Drag::Orbit) {  // a click, not the end of an orbit
    const auto hit = pick(event->position().toPoint());
    if (!hit)
      model_->selectQuery(-1);
    else if (hit->kind == Kind::Query)
      model_->selectQuery(hit->index);
  }
  drag_ = Drag::None;
}

void QkEmbeddingView::wheelEvent(QWheelEvent* event) {
  zoomCamera(std::pow(1.1, event->angleDelta().y() / 120.0));
  event->accept();
}

void QkEmbeddingView::leaveEvent(QEvent*) {
  if (hoverText_.isEmpty()) return;
  hoverText_.clear();
  emit hovered(QString());
}

}  // namespace attnlab
