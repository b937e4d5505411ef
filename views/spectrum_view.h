#pragma once
// The QK spectra of one head, or of every head of a layer overlaid: eigenvalues of
// W_q^T W_k in the complex plane over the Ginibre null disk and a random-init draw; the singular
// values; RoPE per-frequency phases when the model uses RoPE; the skew/symmetric energy share and
// the departure from normality as numbers. A slider and a play button move through the training
// snapshots; the axes stay fixed across snapshots so the motion shows. A log-radius plane (on by
// itself once a trained spectrum would shrink the null disk to a dot) shows both at once.
#include <QWidget>

class QChart;
class QChartView;
class QCheckBox;
class QComboBox;
class QLabel;
class QPushButton;
class QGridLayout;
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
  // The layer and head come from a selection shown elsewhere (the window's): the pickers hide and
  // a check box overlays every head of the layer instead.
  void setSharedSelection(bool shared);
  QCheckBox* overlayCheck() const { return overlay_; }
  // An opened model has one snapshot and no steps: the label names it instead ("" for a lab run).
  void setModelName(const QString& name);

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  void syncControls();
  void redraw();
  void redrawPlane();
  void fitPlaneAspect();
  void redrawSingular();
  void redrawRope();
  void updateNumbers();

  SpectrumModel* model_;
  QLabel* layerLabel_;
  QComboBox* layerPicker_;
  QLabel* headLabel_;
  QComboBox* headPicker_;
  QCheckBox* overlay_;
  int singleHead_ = 0;  // the head to go back to when the overlay is switched off
  QSlider* slider_;
  QPushButton* play_;
  QCheckBox* fit_;
  QCheckBox* logRadius_;  // the plane's log-radius scale (SpectrumModel::PlaneScale)
  QLabel* stepLabel_;
  QString modelName_;
  QLabel* numbers_;
  QGridLayout* charts_ = nullptr;
  QChartView* plane_;
  QChartView* singular_;
  QChartView* rope_;
  QValueAxis* magnitudeAxis_;  // right axis of the RoPE chart
  QTimer* timer_;
  bool fittingPlane_ = false, planeMoved_ = false;
};

}  // namespace attnlab
