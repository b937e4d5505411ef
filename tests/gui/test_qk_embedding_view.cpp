// The 3D query-key view on a real OpenGL context (Xvfb + Mesa): it draws something, the picture
// changes when the camera turns, picking finds the point under the pointer, and a click on a query
// selects it.
#include <QSignalSpy>
#include <QSurfaceFormat>
#include <QtTest>
#include <cmath>

#include "qk_embedding_model.h"
#include "qk_embedding_view.h"

using namespace attnlab;
using Kind = QkEmbeddingModel::Kind;

namespace {

// Queries on one helix, keys on another, 24 positions; each query attends to its last 4 keys.
std::shared_ptr<QkEmbeddingData> helices() {
  auto data = std::make_shared<QkEmbeddingData>();
  for (int p = 0; p < 24; ++p) {
    const float t = p * 0.5f;
    const std::string token(1, char('a' + p % 5));
    data->queries.push_back({QVector3D(std::cos(t), std::sin(t), p * 0.15f), 0, p, token, "query"});
    data->keys.push_back({QVector3D(0.6f * std::cos(t + 1), 0.6f * std::sin(t + 1), p * 0.15f), 0, p, token, "key"});
    std::vector<KeyWeight> row;
    for (int k = std::max(0, p - 3); k <= p; ++k) row.push_back({k, float(k + 1) / float(4 * (p + 1))});
    data->attention.push_back(row);
  }
  data->dotDistanceCorrelation = -0.5;
  return data;
}

int differingPixels(const QImage& a, const QImage& b) {
  int n = 0;
  for (int y = 0; y < a.height(); ++y)
    for (int x = 0; x < a.width(); ++x) n += a.pixel(x, y) != b.pixel(x, y);
  return n;
}

// Pixels that are not the background colour (the top-left corner is always background).
int drawnPixels(const QImage& image) {
  const QRgb background = image.pixel(0, 0);
  int n = 0;
  for (int y = 0; y < image.height(); ++y)
    for (int x = 0; x < image.width(); ++x) n += image.pixel(x, y) != background;
  return n;
}

}  // namespace

class TestQkEmbeddingView : public QObject {
  Q_OBJECT
 private slots:
  void rendersAndTurns() {
    QkEmbeddingModel model;
    model.setData(helices());
    QkEmbeddingView view(&model);
    view.resize(400, 400);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));

    const QImage first = view.grabFramebuffer();
    QCOMPARE(first.size(), QSize(400, 400));
    const int drawn = drawnPixels(first);
    QVERIFY2(drawn > 2000, qPrintable(QString("only %1 pixels drawn").arg(drawn)));
    QVERIFY(drawn < 400 * 400);  // not one flat colour either

    view.rotateCamera(70, 25);
    const QImage turned = view.grabFramebuffer();
    const int changed = differingPixels(first, turned);
    QVERIFY2(changed > 2000, qPrintable(QString("only %1 pixels changed after the rotation").arg(changed)));

    view.rotateCamera(-70, 0);  // the inverse azimuth ...
    view.rotateCamera(0, -25);  // ... and elevation: not exactly the first picture, but close
    view.resetCamera();
    QCOMPARE(differingPixels(first, view.grabFramebuffer()), 0);  // the reset view is the first view
  }

  void pickingAndSelection() {
    QkEmbeddingModel model;
    model.setData(helices());
    QkEmbeddingView view(&model);
    view.resize(400, 400);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));

    const auto at = view.projected(Kind::Query, 23);
    QVERIFY(at);
    QVERIFY(view.rect().contains(at->toPoint()));
    const auto hit = view.pick(at->toPoint());
    QVERIFY(hit);
    QCOMPARE(int(hit->kind), int(Kind::Query));
    QCOMPARE(hit->index, 23);
    QVERIFY(!view.pick(QPoint(1, 1)));  // the corner is empty

    const QImage before = view.grabFramebuffer();
    QTest::mouseClick(&view, Qt::LeftButton, Qt::NoModifier, at->toPoint());
    QCOMPARE(model.selectedQuery(), 23);
    QCOMPARE(int(model.selectedLines().size()), 4);
    QVERIFY(differingPixels(before, view.grabFramebuffer()) > 100);  // the ring and the tubes appear

    QTest::mouseClick(&view, Qt::LeftButton, Qt::NoModifier, QPoint(1, 1));  // empty space clears
    QCOMPARE(model.selectedQuery(), -1);
  }

  void dragOrbitsAndWheelZooms() {
    QkEmbeddingModel model;
    model.setData(helices());
    QkEmbeddingView view(&model);
    view.resize(400, 400);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    const QPointF start = *view.projected(Kind::Key, 0);
    QTest::mousePress(&view, Qt::LeftButton, Qt::NoModifier, QPoint(200, 200));
    QMouseEvent move(QEvent::MouseMove, QPointF(260, 210), view.mapToGlobal(QPointF(260, 210)), Qt::NoButton,
                     Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&view, &move);
    QTest::mouseRelease(&view, Qt::LeftButton, Qt::NoModifier, QPoint(260, 210));
    QCOMPARE(model.selectedQuery(), -1);  // a drag is not a click
    const QPointF orbited = *view.projected(Kind::Key, 0);
    QVERIFY(std::hypot(orbited.x() - start.x(), orbited.y() - start.y()) > 5);

    // Zooming in moves points away from the centre of the picture.
    const QPointF centre(200, 200);
    const QPointF before = *view.projected(Kind::Query, 23);
    view.zoomCamera(1.5);
    const QPointF after = *view.projected(Kind::Query, 23);
    QVERIFY(std::hypot(after.x() - centre.x(), after.y() - centre.y()) >
            std::hypot(before.x() - centre.x(), before.y() - centre.y()));
  }
};

int main(int argc, char** argv) {
  QSurfaceFormat format;  // as app/gui/main.cpp: what VTK's OpenGL2 backend needs
  format.setVersion(3, 2);
  format.setProfile(QSurfaceFormat::CoreProfile);
  format.setDepthBufferSize(24);
  QSurfaceFormat::setDefaultFormat(format);
  QApplication app(argc, argv);
  TestQkEmbeddingView test;
  return QTest::qExec(&test, argc, argv);
}

#include "test_qk_embedding_view.moc"
