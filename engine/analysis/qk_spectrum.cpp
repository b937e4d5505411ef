#include "analysis/qk_spectrum.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "analysis/analysis.h"
#include "attention/attention.h"
#include "io/checkpoint.h"
#include "model/model.h"
#include "model/projection_sharing.h"
#include "positional/positional.h"

namespace attnlab {

namespace {
const Param& tensorOf(const ParamStore& params, const std::string& name, int rows, int cols) {
  const Param* p = params.find(name);
  if (!p) throw std::invalid_argument("the model has no tensor " + name);
  if (p->value.rows() != rows || p->value.cols() != cols)
    throw std::invalid_argument("tensor " + name + " is not [" + std::to_string(rows) + ", " + std::to_string(cols) + "]");
  return *p;
}
}  // namespace

HeadProjections headProjections(const ModelConfig& config, const ParamStore& params, int layer, int head) {
  const auto sharing = projectionSharingOf(config.projection_sharing);
  if (!sharing) throw std::invalid_argument("unknown projection sharing '" + config.projection_sharing + "'");
  if (layer < 0 || layer >= config.n_layers || head < 0 || head >= config.n_heads)
    throw std::invalid_argument("no head " + std::to_string(head) + " in layer " + std::to_string(layer));
  const int dh = config.headDim(), d = config.d_model, kvHead = head / (config.n_heads / config.kvHeads());
  const std::string prefix = "blocks." + std::to_string(layer) + ".attn.";
  // cross-layer KV: a reader's keys come from its group's first layer's key projection
  const std::string keyName = "blocks." + std::to_string(config.kvSourceOf(layer)) + ".attn." + "w" + (sharing->queryIsKey ? "q" : "") + "k" + (sharing->valueIsKey ? "v" : "") + ".weight";
  HeadProjections out;
  out.queryIsKey = sharing->queryIsKey;
  if (sharing->latent) {  // latent KV: the key map is W_UK W_DKV
    const int dc = config.latentDim();
    out.wk = tensorOf(params, prefix + "wuk.weight", config.kvHeads() * dh, dc).value.middleRows(kvHead * dh, dh).cast<double>() *
             tensorOf(params, prefix + "wdkv.weight", dc, d).value.cast<double>();
  } else {
    out.wk = tensorOf(params, keyName, config.kvHeads() * dh, d).value.middleRows(kvHead * dh, dh).cast<double>();
  }
  out.wq = sharing->queryIsKey ? out.wk
                               : tensorOf(params, prefix + "wq.weight", config.n_heads * dh, d).value.middleRows(head * dh, dh).cast<double>();
  return out;
}

QkSpectrum qkSpectrumOf(const Eigen::MatrixXd& wq, const Eigen::MatrixXd& wk, const std::vector<double>& ropeFrequencies) {
  QkSpectrum s;
  const Eigen::MatrixXd small = wk * wq.transpose();  // S = W_k W_q^T
  Eigen::EigenSolver<Eigen::MatrixXd> eig(small, false);
  for (Eigen::Index i = 0; i < small.rows(); ++i) s.eigenvalues.push_back(eig.eigenvalues()(i));
  std::sort(s.eigenvalues.begin(), s.eigenvalues.end(), [](auto a, auto b) { return std::abs(a) > std::abs(b); });

  // With W_q^T = Q_q R_q and W_k^T = Q_k R_k (thin QR), M = Q_q (R_q R_k^T) Q_k^T: same singular values.
  const Eigen::MatrixXd rq = Eigen::HouseholderQR<Eigen::MatrixXd>(wq.transpose()).matrixQR().topRows(wq.rows()).triangularView<Eigen::Upper>();
  const Eigen::MatrixXd rk = Eigen::HouseholderQR<Eigen::MatrixXd>(wk.transpose()).matrixQR().topRows(wk.rows()).triangularView<Eigen::Upper>();
  const Eigen::VectorXd sv = Eigen::JacobiSVD<Eigen::MatrixXd>(rq * rk.transpose()).singularValues();
  s.singular_values.assign(sv.data(), sv.data() + sv.size());

  // ||M||^2 = tr(W_q W_q^T W_k W_k^T); tr(M^2) = tr(S^2); ||(M - M^T)/2||^2 = (||M||^2 - tr(M^2)) / 2.
  const double normSq = ((wq * wq.transpose()).cwiseProduct(wk * wk.transpose())).sum();
  const double traceSq = (small * small).trace();
  double eigSq = 0, imagSq = 0;
  for (auto l : s.eigenvalues) {
    eigSq += std::norm(l);
    imagSq += l.imag() * l.imag();
    s.spectral_radius = std::max(s.spectral_radius, std::abs(l));
  }
  s.frobenius = std::sqrt(std::max(normSq, 0.0));
  if (normSq > 0) {
    s.skew_energy_share = std::max(0.0, (normSq - traceSq) / 2) / normSq;
    s.henrici = std::sqrt(std::max(0.0, normSq - eigSq) / normSq);
  }
  s.imaginary_share = eigSq > 0 ? imagSq / eigSq : 0;

  double reSq = 0, imSq = 0;
  for (size_t m = 0; m < ropeFrequencies.size() && static_cast<Eigen::Index>(2 * m + 1) < small.rows(); ++m) {
    RopeBlock b;
    b.frequency = ropeFrequencies[m];
    b.block = small.block<2, 2>(2 * m, 2 * m);
    b.re = (b.block(0, 0) + b.block(1, 1)) / 2;
    b.im = (b.block(1, 0) - b.block(0, 1)) / 2;
    b.phase = std::atan2(b.im, b.re);
    b.conjugate = std::hypot((b.block(0, 0) - b.block(1, 1)) / 2, (b.block(0, 1) + b.block(1, 0)) / 2);
    reSq += b.re * b.re;
    imSq += b.im * b.im;
    s.rope.push_back(b);
  }
  s.rope_rotational_share = reSq + imSq > 0 ? imSq / (reSq + imSq) : 0;
  return s;
}

std::vector<double> ropeFrequencies(const ModelConfig& config, int layer) {
  if (config.positional != "rope") return {};
  // The same rule as AttentionLayer::rotary(): only dot-product scores are rotated.
  const auto variant = AttentionRegistry::instance().create(config.attentionOf(layer));
  if (!variant || !variant->usesDotScores()) return {};
  auto rope = PositionalRegistry::instance().create("rope");
  ParamStore scratch;
  if (!rope || !rope->configure(config, scratch).empty()) return {};
  // The angle at position 1 is theta_m itself.
  const int one = 1;
  Mat angles;
  rope->rotaryAngles(0, Mat(), &one, 1, 1, angles);
  std::vector<double> out;
  for (Eigen::Index m = 0; m < angles.cols(); ++m) out.push_back(angles(0, m));
  return out;
}

GinibreNull ginibreNull(const ModelConfig& config, const ParamStore& freshParams) {
  GinibreNull n;
  const HeadProjections p = headProjections(config, freshParams, 0, 0);
  n.init_std = std::sqrt(p.wk.squaredNorm() / p.wk.size());
  n.circular_radius = n.init_std * n.init_std * std::sqrt(static_cast<double>(config.d_model) * config.headDim());
  n.symmetric = p.queryIsKey;
  return n;
}

QkSpectrumReport qkSpectra(const ModelConfig& config, const ParamStore& params, const std::vector<std::pair<int, int>>& heads,
                           uint64_t nullSeed) {
  QkSpectrumReport r;
  const Model fresh(config, nullSeed);
  r.null = ginibreNull(config, fresh.params());
  for (auto [l, h] : heads) {
    const HeadProjections p = headProjections(config, params, l, h);
    QkSpectrum s = qkSpectrumOf(p.wq, p.wk, ropeFrequencies(config, l));
    s.layer = l;
    s.head = h;
    r.heads.push_back(std::move(s));
    const HeadProjections f = headProjections(config, fresh.params(), l, h);
    r.null_draw.push_back(qkSpectrumOf(f.wq, f.wk, {}).eigenvalues);
  }
  return r;
}

std::vector<std::vector<QkSpectrum>> qkSpectrumSeries(const ModelConfig& config, const std::vector<const ParamStore*>& snapshots) {
  std::vector<std::pair<int, int>> all;
  for (int l = 0; l < config.n_layers; ++l)
    for (int h = 0; h < config.n_heads; ++h) all.push_back({l, h});
  std::vector<std::vector<double>> freq;
  for (int l = 0; l < config.n_layers; ++l) freq.push_back(ropeFrequencies(config, l));
  std::vector<std::vector<QkSpectrum>> out;
  for (const ParamStore* params : snapshots) {
    std::vector<QkSpectrum> step;
    for (auto [l, h] : all) {
      const HeadProjections p = headProjections(config, *params, l, h);
      step.push_back(qkSpectrumOf(p.wq, p.wk, freq[l]));
      step.back().layer = l;
      step.back().head = h;
    }
    out.push_back(std::move(step));
  }
  return out;
}

std::string qkSpectrumSeries(const std::vector<std::string>& folders, std::vector<std::vector<QkSpectrum>>& out) {
  out.clear();
  std::vector<LoadedCheckpoint> loaded(folders.size());
  std::vector<const ParamStore*> snapshots;
  for (size_t i = 0; i < folders.size(); ++i) {
    if (std::string why = loadCheckpoint(folders[i], loaded[i]); !why.empty()) return why;
    const ModelConfig& a = loaded[0].config.model;
    const ModelConfig& b = loaded[i].config.model;
    if (a.d_model != b.d_model || a.n_layers != b.n_layers || a.n_heads != b.n_heads || a.n_kv_heads != b.n_kv_heads ||
        a.projection_sharing != b.projection_sharing || a.positional != b.positional)
      return folders[i] + ": its model differs in shape from " + folders[0] + "'s; a series needs one configuration";
    snapshots.push_back(&loaded[i].trainer->model().params());
  }
  if (!snapshots.empty()) {
    try {
      out = qkSpectrumSeries(loaded[0].trainer->config().model, snapshots);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
  }
  return {};
}

namespace {

Json complexList(const std::vector<std::complex<double>>& values) {
  Json out = Json::array();
  for (auto v : values) out.push_back({v.real(), v.imag()});
  return out;
}

Json spectrumJson(const QkSpectrum& s, const GinibreNull& null) {
  Json j = {{"layer", s.layer},
            {"head", s.head},
            {"eigenvalues", complexList(s.eigenvalues)},
            {"singular_values", s.singular_values},
            {"frobenius", s.frobenius},
            {"spectral_radius", s.spectral_radius},
            {"radius_over_null", null.circular_radius > 0 ? s.spectral_radius / null.circular_radius : 0.0},
            {"skew_energy_share", s.skew_energy_share},
            {"henrici", s.henrici},
            {"imaginary_share", s.imaginary_share}};
  if (!s.rope.empty()) {
    Json blocks = Json::array();
    for (const RopeBlock& b : s.rope)
      blocks.push_back({{"frequency", b.frequency},
                        {"block", {b.block(0, 0), b.block(0, 1), b.block(1, 0), b.block(1, 1)}},
                        {"re", b.re},
                        {"im", b.im},
                        {"phase", b.phase},
                        {"conjugate", b.conjugate}});
    j["rope_blocks"] = std::move(blocks);
    j["rope_rotational_share"] = s.rope_rotational_share;
  }
  return j;
}

class QkSpectrumAnalysis : public Analysis {
 public:
  Json run(Trainer& trainer, const AnalysisOptions& options) const override {
    const ModelConfig& config = trainer.config().model;
    const QkSpectrumReport r = qkSpectra(config, trainer.model().params(), selectedHeads(config, options), options.seed);
    Json heads = Json::array();
    for (size_t i = 0; i < r.heads.size(); ++i) {
      Json j = spectrumJson(r.heads[i], r.null);
      j["null_draw"] = complexList(r.null_draw[i]);
      heads.push_back(std::move(j));
    }
    return {{"matrix", "M = W_q^T W_k (d_model x d_model); eigenvalues from S = W_k W_q^T (d_head x d_head)"},
            {"null", {{"init_std", r.null.init_std}, {"circular_radius", r.null.circular_radius}, {"symmetric", r.null.symmetric}}},
            {"heads", std::move(heads)}};
  }

  std::string describe(const Json& result) const override {
    std::ostringstream out;
    out << "Ginibre null: init std " << result["null"]["init_std"].get<double>() << ", circular-law radius "
        << result["null"]["circular_radius"].get<double>() << "\n";
    out << "layer head  radius/null  |M|_F    skew   henrici  imag   rope_rot\n";
    for (const Json& h : result["heads"]) {
      char line[160];
      std::snprintf(line, sizeof line, "%5d %4d  %11.3f  %7.4f  %5.3f  %7.3f  %5.3f", h["layer"].get<int>(), h["head"].get<int>(),
                    h["radius_over_null"].get<double>(), h["frobenius"].get<double>(), h["skew_energy_share"].get<double>(),
                    h["henrici"].get<double>(), h["imaginary_share"].get<double>());
      out << line;
      if (h.contains("rope_rotational_share")) {
        std::snprintf(line, sizeof line, "  %5.3f", h["rope_rotational_share"].get<double>());
        out << line;
      }
      out << "\n";
    }
    return out.str();
  }
};

ATTNLAB_REGISTER(AnalysisRegistry, "qk_spectrum",
                 "eigenvalues, singular values, skew share, Henrici departure of M = W_q^T W_k per head, Ginibre null, RoPE blocks",
                 [] { return std::make_unique<QkSpectrumAnalysis>(); });

}  // namespace
}  // namespace attnlab
