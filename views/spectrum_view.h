#pragma once
// The QK spectra of one head, or of every head of a layer overlaid (CATALOGUE X1): eigenvalues of
// W_q^T W_k in the complex plane over the Ginibre null disk and a random-init draw; the singular
// values; RoPE per-frequency phases when the model uses RoPE; the skew/symmetric energy share and
// the departure from normality as numbers. A slider and a play button move through the training
// snapshots; the axes stay fixed across snapshots so the motion shows.
#include <QWidget>

class QChart;
class QChartView;
class QCheckBox;
class QComboBox;
class QLabel;
class QPushButton;
class QSlider;
class QTimer;
class QValueAxis;

namespace attnlab {

class SpectrumModel;

class SpectrumView : public QWidget {
  Q_OBJECT
 public:
  explicit SpectrumView(SpectrumModel* model, QWidget* parent = nullptr);

  QChart* planeChart() const;
  QChart* singularChart() const;
  QChart* ropeChart() const;
  QSlider* snapshotSlider() const { return slider_; }
  bool playing() const;
  void setPlaying(bool play);  // from the current snapshot (or the first, when at the end)
  void setPlayInterval(int milliseconds);

 private:
  void syncControls();
  void redraw();
  void redrawPlane();
  void fitPlaneAspect();
  void redrawSingular();
  void redrawRope();
  void updateNumbers();

  SpectrumModel* model_;
  QComboBox* layerPicker_;
  QComboBox* headPicker_;
  QSlider* slider_;
  QPushButton* play_;
  QCheckBox* fit_;
  QLabel* stepLabel_;
  QLabel* numbers_;
  QChartView* plane_;
  QChartView* singular_;
  QChartView* rope_;
  QValueAxis* magnitudeAxis_;  // right axis of the RoPE chart
  QTimer* timer_;
};

}  // namespace attnlab
