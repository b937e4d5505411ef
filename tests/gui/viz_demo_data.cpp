#include "viz_demo_data.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

namespace attnlab::demo {

namespace {

// Rows [head * dh, (head + 1) * dh) of a [n * dh, d] projection, as doubles.
Eigen::MatrixXd headRows(const ParamStore& params, const std::string& name, int head, int dh) {
  const Param* p = params.find(name);
  if (!p) throw std::invalid_argument("demo: no tensor " + name + " (only standard qkv projections are supported)");
  return p->value.block(head * dh, 0, dh, p->value.cols()).cast<double>();
}

std::string prefix(int layer) { return "blocks." + std::to_string(layer) + ".attn."; }

std::vector<double> ropeFrequencies(const ModelConfig& config) {
  std::vector<double> freq;
  if (config.positional != "rope") return freq;
  const int dh = config.headDim();
  const auto theta = config.positional_settings.find("theta");
  const auto fraction = config.positional_settings.find("rotary_fraction");
  const double base = theta != config.positional_settings.end() ? theta->second : 10000.0;
  const int pairs = int(std::lround((fraction != config.positional_settings.end() ? fraction->second : 1.0) * dh / 2.0));
  for (int m = 0; m < pairs; ++m) freq.push_back(std::pow(base, -2.0 * m / dh));
  return freq;
}

HeadSpectrum spectrumOf(const ModelConfig& config, const ParamStore& params, int layer, int head) {
  const int dh = config.headDim();
  const int kvHead = head / (config.n_heads / config.kvHeads());
  const Eigen::MatrixXd wq = headRows(params, prefix(layer) + "wq.weight", head, dh);
  const Eigen::MatrixXd wk = headRows(params, prefix(layer) + "wk.weight", kvHead, dh);
  HeadSpectrum s;
  s.layer = layer;
  s.head = head;
  const Eigen::MatrixXd small = wk * wq.transpose();  // d_h x d_h: the nonzero eigenvalues of M
  const Eigen::MatrixXd m = wq.transpose() * wk;      // d x d
  const Eigen::VectorXcd lambda = Eigen::EigenSolver<Eigen::MatrixXd>(small, false).eigenvalues();
  for (Eigen::Index i = 0; i < lambda.size(); ++i) s.eigenvalues.push_back(lambda[i]);
  std::sort(s.eigenvalues.begin(), s.eigenvalues.end(), [](auto a, auto b) { return std::abs(a) > std::abs(b); });
  const Eigen::VectorXd sigma = Eigen::JacobiSVD<Eigen::MatrixXd>(m).singularValues();
  for (int i = 0; i < dh && i < sigma.size(); ++i) s.singularValues.push_back(sigma[i]);
  const double norm2 = m.squaredNorm();
  s.skewEnergyShare = (0.5 * (m - m.transpose())).squaredNorm() / norm2;
  double sumLambda2 = 0;
  for (const auto& z : s.eigenvalues) sumLambda2 += std::norm(z);
  s.nonNormality = std::sqrt(std::max(0.0, norm2 - sumLambda2) / norm2);
  const std::vector<double> freq = ropeFrequencies(config);
  for (size_t p = 0; p < freq.size(); ++p) {
    const Eigen::Matrix2d b = small.block<2, 2>(2 * p, 2 * p);
    const std::complex<double> z(0.5 * (b(0, 0) + b(1, 1)), 0.5 * (b(1, 0) - b(0, 1)));
    s.rope.push_back({freq[p], std::abs(z), std::arg(z)});
  }
  return s;
}

double pearson(const std::vector<double>& a, const std::vector<double>& b) {
  const double n = double(a.size());
  double ma = 0, mb = 0;
  for (size_t i = 0; i < a.size(); ++i) ma += a[i] / n, mb += b[i] / n;
  double cov = 0, va = 0, vb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    cov += (a[i] - ma) * (b[i] - mb);
    va += (a[i] - ma) * (a[i] - ma);
    vb += (b[i] - mb) * (b[i] - mb);
  }
  return va > 0 && vb > 0 ? cov / std::sqrt(va * vb) : 0;
}

}  // namespace

SpectrumSnapshot spectraOf(const Model& model, int step) {
  SpectrumSnapshot snapshot;
  snapshot.step = step;
  const ModelConfig& config = model.config();
  for (int layer = 0; layer < config.n_layers; ++layer)
    for (int head = 0; head < config.n_heads; ++head) snapshot.heads.push_back(spectrumOf(config, model.params(), layer, head));
  return snapshot;
}

void setNull(const ModelConfig& config, uint64_t seed, SpectrumSeries& series) {
  const Model fresh(config, seed);
  const Param* wk = fresh.params().find(prefix(0) + "wk.weight");
  if (!wk) throw std::invalid_argument("demo: no tensor " + prefix(0) + "wk.weight");
  const double s2 = wk->value.cast<double>().squaredNorm() / double(wk->value.size());  // entries have mean 0
  series.nullRadius = s2 * std::sqrt(double(config.d_model) * config.headDim());
  series.nullDraw = spectraOf(fresh, 0).heads;
}

QkEmbeddingData embeddingOf(const Trainer& trainer, int layer, int head, int sequences) {
  const Task& task = trainer.task();
  const int T = task.sequenceLength(trainer.config().model.context);
  Rng rng(2024);
  const Batch batch = task.sample(sequences, T, Split::Validation, rng);
  QkEmbeddingData data;
  data.layer = layer;
  data.head = head;

  // Gather q and k of every position, and the attention of each query on its visible keys.
  std::vector<Eigen::RowVectorXd> qs, ks;
  for (int b = 0; b < sequences; ++b) {
    const std::vector<int> tokens(batch.inputs.begin() + b * T, batch.inputs.begin() + (b + 1) * T);
    const Trace trace = trainer.trace(tokens);
    const HeadTrace& h = trace.layers.at(layer).heads.at(head);
    std::set<int> seen;
    const int base = int(data.keys.size());
    for (int t = 0; t < T; ++t) {
      const std::string role = seen.insert(tokens[t]).second ? "first occurrence" : "repeated token";
      const EmbeddedToken token{QVector3D(), b, t, trace.labels[t], role};
      data.queries.push_back(token);
      data.keys.push_back(token);
      qs.push_back(h.q.row(t).cast<double>());
      ks.push_back(h.k.row(t).cast<double>());
      std::vector<KeyWeight> row;
      for (int j = 0; j <= t; ++j) row.push_back({base + j, h.weights(t, j)});
      data.attention.push_back(std::move(row));
    }
  }

  // Normalise (queries to unit rms, keys centred on the queries' mean at unit rms spread), then
  // one joint PCA to 3D.
  const int n = int(qs.size()), dh = int(qs[0].size());
  Eigen::MatrixXd q(n, dh), k(n, dh);
  for (int i = 0; i < n; ++i) q.row(i) = qs[i], k.row(i) = ks[i];
  q /= std::sqrt(q.rowwise().squaredNorm().mean());
  const Eigen::RowVectorXd kMean = k.colwise().mean();
  k.rowwise() -= kMean;
  k /= std::sqrt(k.rowwise().squaredNorm().mean());
  k.rowwise() += q.colwise().mean();
  Eigen::MatrixXd joint(2 * n, dh);
  joint << q, k;
  const Eigen::RowVectorXd centre = joint.colwise().mean();
  joint.rowwise() -= centre;
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> pca(joint.transpose() * joint);
  const Eigen::MatrixXd axes = pca.eigenvectors().rightCols(std::min(3, dh)).rowwise().reverse();
  const Eigen::MatrixXd projected = joint * axes;
  for (int i = 0; i < n; ++i) {
    data.queries[i].point = QVector3D(projected(i, 0), projected(i, 1), projected(i, 2));
    data.keys[i].point = QVector3D(projected(n + i, 0), projected(n + i, 1), projected(n + i, 2));
  }

  std::vector<double> dots, distances;
  for (int i = 0; i < n; ++i)
    for (const KeyWeight& kw : data.attention[i]) {
      dots.push_back(qs[i].dot(ks[kw.key]));
      distances.push_back((data.queries[i].point - data.keys[kw.key].point).length());
    }
  data.dotDistanceCorrelation = pearson(dots, distances);
  return data;
}

}  // namespace attnlab::demo
