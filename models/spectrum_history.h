#pragma once
// The spectra view's data from the engine's QK spectra (engine/analysis/qk_spectrum.h): every
// head's spectrum of each new model snapshot becomes one frame of a history over training, kept
// to at most maxFrames frames (thinned evenly as training goes on, the latest always kept), with
// the Ginibre null and a fresh model's draw computed once per run. Frames are computed on a
// BackgroundJob from the ModelSnapshot each trace carries; the UI thread only appends. An opened
// checkpoint's history starts with the frames of its saved projections (RunData::qkHistory).
#include <QObject>
#include <QString>
#include <memory>

#include "background_job.h"
#include "snapshots.h"
#include "spectrum_model.h"

namespace attnlab {

class AttentionMapModel;
struct QkSpectrum;

// One head's spectrum as the spectra model holds it.
HeadSpectrum headSpectrumOf(const QkSpectrum& spectrum);
// Every head of the snapshot's model, at its step.
SpectrumSnapshot spectrumFrame(const ModelSnapshot& snapshot);
// Every head of a model of `config` with the query and key projections `weights` (a saved frame).
SpectrumSnapshot spectrumFrame(const ModelConfig& config, int step, const ParamStore& weights);
// The Ginibre null of `config`, with the eigenvalues of every head of a freshly initialised model
// drawn with `seed` (for overlay), into a series with no frames yet.
SpectrumSeries spectrumNull(const ModelConfig& config, uint64_t seed);

class SpectrumHistory : public QObject {
  Q_OBJECT
 public:
  static constexpr int kMaxFrames = 200;

  explicit SpectrumHistory(AttentionMapModel* attention, QObject* parent = nullptr, int maxFrames = kMaxFrames);

  // The history so far (never null; no frames before the first trace).
  std::shared_ptr<const SpectrumSeries> series() const { return series_; }
  // Frames are at least this many steps apart (but the latest): doubles each time the history is thinned.
  int stride() const { return stride_; }
  BackgroundJob& job() { return job_; }

 signals:
  void seriesChanged();
  void failed(const QString& message);

 private:
  void follow();  // a new trace: a frame if its model is at a new step
  // `frames`: a checkpoint's saved ones (when the run starts) and then the latest snapshot's.
  void add(const std::shared_ptr<const RunData>& run, std::vector<std::shared_ptr<const SpectrumSnapshot>> frames,
           std::shared_ptr<const SpectrumSeries> null);
  void append(SpectrumSeries& series, std::shared_ptr<const SpectrumSnapshot> frame);

  AttentionMapModel* attention_;
  BackgroundJob job_;
  int maxFrames_;
  int stride_ = 1;
  std::shared_ptr<const RunData> run_;  // whose history this is; a new run starts a new history
  int requestedStep_ = -1;              // the newest step a frame was asked for
  std::shared_ptr<const SpectrumSeries> series_;
};

}  // namespace attnlab
