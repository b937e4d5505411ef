#include "analysis/map_diagnostics.h"

#include <cmath>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "analysis/analysis.h"
#include "model/workspace.h"

namespace attnlab {

namespace {
template <class F>
void forEachField(MapDiagnostics& a, const MapDiagnostics& b, F f) {
  f(a.entropy, b.entropy);
  f(a.normalised_entropy, b.normalised_entropy);
  f(a.mean_distance, b.mean_distance);
  f(a.sink, b.sink);
  f(a.previous_token, b.previous_token);
  f(a.induction, b.induction);
  f(a.effective_rank, b.effective_rank);
  f(a.row_mass, b.row_mass);
}

// A row whose weights sum to 1 within float rounding counts as normalised.
constexpr double kMassTolerance = 1e-4;
}  // namespace

MapDiagnostics diagnoseMap(const float* weights, const float* scores, int T, EffectiveRank rank) {
  MapDiagnostics d;
  int rows = 0;
  // Each row as whole-array sums in double (vectorised; cell by cell, a 12 x 12-head model's
  // validation spent seconds here at 1,024 tokens). The entropy of p = a / mass over the visible
  // keys with a > 0 is log(mass) - sum(a log a) / mass.
  const Eigen::ArrayXd position = Eigen::ArrayXd::LinSpaced(T, 0, T - 1);
  Eigen::ArrayXd a(T), seen(T), counted(T);
  for (int i = 0; i < T; ++i) {
    a = Eigen::Map<const Eigen::ArrayXf>(weights + static_cast<size_t>(i) * T, T).cast<double>();
    if (scores)
      seen = Eigen::Map<const Eigen::ArrayXf>(scores + static_cast<size_t>(i) * T, T).isFinite().cast<double>();
    else
      seen = (position <= i).cast<double>();
    const int count = static_cast<int>(seen.sum());
    if (count < 2) continue;
    ++rows;
    counted = seen * (a > 0).cast<double>();  // the keys that carry the row's distribution
    const double mass = (a * counted).sum();
    d.row_mass += mass;
    d.mean_distance += (a * (position - i).abs()).sum();
    if (i > 0) d.previous_token += a(i - 1);
    if (std::abs(mass - 1.0) > kMassTolerance) d.renormalised = true;
    if (mass <= 0) continue;  // a row with no weight anywhere: no distribution, entropy 0 and no sink
    const double aLogA = (counted > 0).select(a * a.max(1e-300).log(), 0.0).sum();
    const double entropy = std::max(0.0, std::log(mass) - aLogA / mass);  // >= 0 but for rounding
    d.entropy += entropy;
    d.normalised_entropy += std::min(1.0, entropy / std::log(static_cast<double>(count)));  // <= 1 but for rounding
    if (seen(0) > 0) d.sink += std::max(0.0, a(0)) / mass;
  }
  if (rows > 0) {
    d.entropy /= rows;
    d.normalised_entropy /= rows;
    d.mean_distance /= rows;
    d.sink /= rows;
    d.previous_token /= rows;
    d.row_mass /= rows;
  }
  if (rank == EffectiveRank::computed) d.effective_rank = effectiveRank(weights, T);
  return d;
}

double inductionScore(const float* weights, int T, int n, int start) {
  double sum = 0;
  int rows = 0;
  for (int i = start + n; i < std::min(start + 2 * n, T); ++i, ++rows) sum += weights[i * T + i - n + 1];
  return rows ? sum / rows : 0.0;
}

double effectiveRank(const float* weights, int T) {
  const Eigen::VectorXf s = Eigen::BDCSVD<Mat>(ConstMatMap(weights, T, T)).singularValues();
  const double total = s.cast<double>().sum();
  if (total <= 0) return 0;
  double entropy = 0;
  for (Eigen::Index i = 0; i < s.size(); ++i)
    if (s(i) > 0) entropy -= (s(i) / total) * std::log(s(i) / total);
  return std::exp(entropy);
}

MapDiagnosticsProbe::MapDiagnosticsProbe(const Task& task, int vocab, int seqLen, int batch, uint64_t seed)
    : half_((seqLen - 1) / 2), workspace_(makeWorkspace()) {
  Rng rng(seed);
  probe_ = task.sample(batch, seqLen, Split::Validation, rng);
  drawRepeats(vocab, batch, rng);
}

MapDiagnosticsProbe::MapDiagnosticsProbe(const Batch& probe, int vocab, int repeatLength, int batch, uint64_t seed)
    : probe_(probe), half_(repeatLength), workspace_(makeWorkspace()) {
  if (probe_.B < 1 || probe_.T < 1) throw std::invalid_argument("head diagnostics need a probe of at least one token");
  Rng rng(seed);
  drawRepeats(vocab, batch, rng);
}

void MapDiagnosticsProbe::drawRepeats(int vocab, int batch, Rng& rng) {
  const int seqLen = probe_.T;
  repeated_.B = batch;
  repeated_.T = 1 + 2 * half_;
  repeated_.targets.assign(static_cast<size_t>(batch) * repeated_.T, -1);
  for (int b = 0; b < batch; ++b) {
    std::vector<int> r(half_);
    for (int& t : r) t = rng.uniformInt(0, vocab - 1);
    repeated_.inputs.push_back(probe_.inputs[static_cast<size_t>(b % probe_.B) * seqLen]);
    for (int rep = 0; rep < 2; ++rep) repeated_.inputs.insert(repeated_.inputs.end(), r.begin(), r.end());
  }
}

MapDiagnosticsProbe::~MapDiagnosticsProbe() = default;

std::vector<std::vector<MapDiagnostics>> MapDiagnosticsProbe::measure(const Model& model, EffectiveRank rank) {
  const ModelConfig& c = model.config();
  const int L = c.n_layers, H = c.n_heads;
  std::vector<std::vector<MapDiagnostics>> out(L, std::vector<MapDiagnostics>(H));
  Workspace& ws = *workspace_;
  // One sequence per forward: the maps of a batch of 1,024-token sequences would take gigabytes.
  const int T = probe_.T;
  std::vector<MapDiagnostics> one(static_cast<size_t>(L) * H);
  for (int b = 0; b < probe_.B; ++b) {
    const size_t first = static_cast<size_t>(b) * T;
    model.forward(ws, probe_.inputs.data() + first, probe_.targets.data() + first, 1, T);
#pragma omp parallel for schedule(dynamic)
    for (int lh = 0; lh < L * H; ++lh) {
      const AttentionActs& a = ws.blocks[lh / H].attn;
      const size_t off = static_cast<size_t>(lh % H) * T * T;
      one[lh] = diagnoseMap(a.weights.data() + off, a.scores.data() + off, T, rank);
    }
    for (int lh = 0; lh < L * H; ++lh) {  // in batch order, whatever the threads
      MapDiagnostics& d = out[lh / H][lh % H];
      forEachField(d, one[lh], [&](double& x, double y) { x += y / probe_.B; });
      d.renormalised = d.renormalised || one[lh].renormalised;
    }
  }
  if (half_ >= 2) {
    const int R = repeated_.T;
    for (auto& layer : out)
      for (MapDiagnostics& d : layer) d.previous_token = 0;
    for (int b = 0; b < repeated_.B; ++b) {
      const size_t first = static_cast<size_t>(b) * R;
      model.forward(ws, repeated_.inputs.data() + first, repeated_.targets.data() + first, 1, R);
      for (int l = 0; l < L; ++l)
        for (int h = 0; h < H; ++h) {
          MapDiagnostics& d = out[l][h];
          const float* map = ws.blocks[l].attn.weights.data() + static_cast<size_t>(h) * R * R;
          d.induction += inductionScore(map, R, half_, 1) / repeated_.B;
          for (int i = 2; i < R; ++i) d.previous_token += map[i * R + i - 1] / (static_cast<double>(R - 2) * repeated_.B);
        }
    }
  }
  return out;
}

std::vector<MapDiagnostics> MapDiagnosticsProbe::layerMeans(const std::vector<std::vector<MapDiagnostics>>& heads) {
  std::vector<MapDiagnostics> out;
  for (const auto& layer : heads) {
    MapDiagnostics m;
    for (const MapDiagnostics& d : layer) {
      forEachField(m, d, [&](double& x, double y) { x += y / layer.size(); });
      m.renormalised = m.renormalised || d.renormalised;
    }
    out.push_back(m);
  }
  return out;
}

namespace {

Json diagnosticsJson(const MapDiagnostics& d) {
  return {{"entropy", d.entropy},         {"normalised_entropy", d.normalised_entropy},
          {"mean_distance", d.mean_distance}, {"sink", d.sink},
          {"previous_token", d.previous_token}, {"induction", d.induction},
          {"effective_rank", d.effective_rank}, {"row_mass", d.row_mass},
          {"renormalised", d.renormalised}};
}

class MapDiagnosticsAnalysis : public Analysis {
 public:
  Json run(Trainer& trainer, const AnalysisOptions& options) const override {
    const auto selected = selectedHeads(trainer.config().model, options);
    MapDiagnosticsProbe probe(trainer.task(), trainer.config().model.vocab, trainer.sequenceLength(),
                              trainer.config().train.batch, options.seed);
    const auto all = probe.measure(trainer.model());
    Json heads = Json::array();
    for (auto [l, h] : selected) {
      Json j = {{"layer", l}, {"head", h}};
      j.update(diagnosticsJson(all[l][h]));
      heads.push_back(std::move(j));
    }
    Json layers = Json::array();
    for (const MapDiagnostics& m : MapDiagnosticsProbe::layerMeans(all)) layers.push_back(diagnosticsJson(m));
    return {{"probe_sequences", trainer.config().train.batch},
            {"sequence_length", trainer.sequenceLength()},
            {"heads", std::move(heads)},
            {"layer_means", std::move(layers)}};
  }

  std::string describe(const Json& result) const override {
    std::ostringstream out;
    out << "layer head  entropy  norm   distance  sink   prev   induct  eff_rank\n";
    for (const Json& h : result["heads"]) {
      char line[160];
      std::snprintf(line, sizeof line, "%5d %4d  %7.3f  %5.3f  %8.2f  %5.3f  %5.3f  %6.3f  %8.2f\n", h["layer"].get<int>(),
                    h["head"].get<int>(), h["entropy"].get<double>(), h["normalised_entropy"].get<double>(),
                    h["mean_distance"].get<double>(), h["sink"].get<double>(), h["previous_token"].get<double>(),
                    h["induction"].get<double>(), h["effective_rank"].get<double>());
      out << line;
    }
    bool renormalised = false;
    for (const Json& h : result["heads"]) renormalised = renormalised || h.value("renormalised", false);
    if (renormalised)
      out << "rows of these maps do not sum to 1 (mean row mass per head in the JSON, row_mass): entropy, norm and sink\n"
             "are computed on each row divided by its mass; distance and prev on the weights as they are\n";
    return out.str();
  }
};

ATTNLAB_REGISTER(AnalysisRegistry, "map_diagnostics",
                 "entropy (raw, normalised), mean distance, sink, previous-token, induction score, effective rank per head",
                 [] { return std::make_unique<MapDiagnosticsAnalysis>(); });

}  // namespace
}  // namespace attnlab
