#include "spectrum_history.h"

#include <cmath>

#include "analysis/qk_spectrum.h"
#include "attention_map_model.h"

namespace attnlab {

HeadSpectrum headSpectrumOf(const QkSpectrum& s) {
  HeadSpectrum h;
  h.layer = s.layer;
  h.head = s.head;
  h.eigenvalues = s.eigenvalues;
  h.singularValues = s.singular_values;
  h.skewEnergyShare = s.skew_energy_share;
  h.nonNormality = s.henrici;
  for (const RopeBlock& b : s.rope) h.rope.push_back({b.frequency, std::hypot(b.re, b.im), b.phase});
  return h;
}

SpectrumSnapshot spectrumFrame(const ModelSnapshot& snapshot) {
  return spectrumFrame(snapshot.model->config(), snapshot.step, snapshot.model->params());
}

SpectrumSnapshot spectrumFrame(const ModelConfig& config, int step, const ParamStore& weights) {
  SpectrumSnapshot frame;
  frame.step = step;
  const std::vector<std::vector<QkSpectrum>> series = qkSpectrumSeries(config, {&weights});
  for (const QkSpectrum& s : series.front()) frame.heads.push_back(headSpectrumOf(s));
  return frame;
}

SpectrumSeries spectrumNull(const ModelConfig& config, uint64_t seed) {
  SpectrumSeries series;
  const Model fresh(config, seed);
  const GinibreNull null = ginibreNull(config, fresh.params());
  series.nullRadius = null.circular_radius;
  series.nullSymmetric = null.symmetric;
  for (int layer = 0; layer < config.n_layers; ++layer)
    for (int head = 0; head < config.n_heads; ++head) {
      const HeadProjections p = headProjections(config, fresh.params(), layer, head);
      HeadSpectrum draw;
      draw.layer = layer;
      draw.head = head;
      draw.eigenvalues = qkSpectrumOf(p.wq, p.wk, {}).eigenvalues;
      series.nullDraw.push_back(std::move(draw));
    }
  return series;
}

SpectrumHistory::SpectrumHistory(AttentionMapModel* attention, QObject* parent, int maxFrames)
    : QObject(parent), attention_(attention), maxFrames_(std::max(2, maxFrames)), series_(std::make_shared<SpectrumSeries>()) {
  connect(attention_, &AttentionMapModel::mapChanged, this, &SpectrumHistory::follow);
  connect(&job_, &BackgroundJob::failed, this, &SpectrumHistory::failed);
  follow();
}

void SpectrumHistory::follow() {
  const TraceSnapshot* trace = attention_->snapshot();
  const std::shared_ptr<const ModelSnapshot> snapshot = trace ? trace->model : nullptr;
  const bool newRun = !snapshot || snapshot->run != run_ || snapshot->step < requestedStep_;
  if (newRun && (run_ || !series_->snapshots.empty())) {  // cleared, reset or another experiment
    job_.cancel();
    run_ = nullptr;
    requestedStep_ = -1;
    stride_ = 1;
    series_ = std::make_shared<SpectrumSeries>();
    emit seriesChanged();
  }
  if (!snapshot || !snapshot->model || !snapshot->run || snapshot->step <= requestedStep_) return;
  run_ = snapshot->run;
  requestedStep_ = snapshot->step;
  // The reference draw is an independent initialisation (not the run's own seed, whose step-0
  // spectrum the history already shows when it starts there).
  const bool needNull = series_->nullDraw.empty();
  const bool withSaved = series_->snapshots.empty();  // the run's first frame: its saved past comes first
  const uint64_t nullSeed = snapshot->run->config.train.seed + 1;
  job_.submit([this, snapshot, needNull, withSaved, nullSeed] {
    std::vector<std::shared_ptr<const SpectrumSnapshot>> frames;
    if (withSaved)
      for (const QkWeightFrame& saved : snapshot->run->qkHistory)
        if (saved.step < snapshot->step)
          frames.push_back(std::make_shared<const SpectrumSnapshot>(spectrumFrame(snapshot->model->config(), saved.step, *saved.weights)));
    frames.push_back(std::make_shared<const SpectrumSnapshot>(spectrumFrame(*snapshot)));
    auto null = needNull ? std::make_shared<const SpectrumSeries>(spectrumNull(snapshot->model->config(), nullSeed)) : nullptr;
    return [this, run = snapshot->run, frames = std::move(frames), null] { add(run, frames, null); };
  });
}

void SpectrumHistory::add(const std::shared_ptr<const RunData>& run, std::vector<std::shared_ptr<const SpectrumSnapshot>> frames,
                          std::shared_ptr<const SpectrumSeries> null) {
  if (run != run_) return;
  auto series = std::make_shared<SpectrumSeries>(*series_);
  if (null) {
    series->nullRadius = null->nullRadius;
    series->nullSymmetric = null->nullSymmetric;
    series->nullDraw = null->nullDraw;
  }
  for (auto& frame : frames) append(*series, std::move(frame));
  series_ = std::move(series);
  emit seriesChanged();
}

void SpectrumHistory::append(SpectrumSeries& series, std::shared_ptr<const SpectrumSnapshot> frame) {
  auto& frames = series.snapshots;
  if (!frames.empty() && frame->step <= frames.back()->step) return;
  // The last frame is the latest snapshot; it stays only once it is a stride past the one before.
  if (frames.size() >= 2 && frame->step - frames[frames.size() - 2]->step < stride_)
    frames.back() = std::move(frame);
  else
    frames.push_back(std::move(frame));
  if (static_cast<int>(frames.size()) > maxFrames_) {  // keep every other frame, and the latest
    std::vector<std::shared_ptr<const SpectrumSnapshot>> kept;
    for (size_t i = 0; i + 1 < frames.size(); i += 2) kept.push_back(frames[i]);
    kept.push_back(frames.back());
    frames = std::move(kept);
    stride_ *= 2;
  }
}

}  // namespace attnlab
