#include "analysis/qk_embedding.h"

#include <cmath>
#include <sstream>
#include <stdexcept>

#include "analysis/analysis.h"
#include "model/workspace.h"

namespace attnlab {

Eigen::MatrixXd pca3(const Eigen::MatrixXd& points, std::array<double, 3>* explained) {
  const Eigen::MatrixXd centred = points.rowwise() - points.colwise().mean();
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(centred.transpose() * centred);  // ascending eigenvalues
  const Eigen::Index dims = points.cols(), axes = std::min<Eigen::Index>(3, dims);
  Eigen::MatrixXd out = Eigen::MatrixXd::Zero(points.rows(), 3);
  const double total = eig.eigenvalues().sum();
  for (Eigen::Index a = 0; a < axes; ++a) {
    out.col(a) = centred * eig.eigenvectors().col(dims - 1 - a);
    if (explained) (*explained)[a] = total > 0 ? eig.eigenvalues()(dims - 1 - a) / total : 0.0;
  }
  return out;
}

double pearson(const std::vector<double>& a, const std::vector<double>& b) {
  const size_t n = std::min(a.size(), b.size());
  if (n == 0) return 0;
  double ma = 0, mb = 0;
  for (size_t i = 0; i < n; ++i) ma += a[i] / n, mb += b[i] / n;
  double cov = 0, va = 0, vb = 0;
  for (size_t i = 0; i < n; ++i) {
    cov += (a[i] - ma) * (b[i] - mb);
    va += (a[i] - ma) * (a[i] - ma);
    vb += (b[i] - mb) * (b[i] - mb);
  }
  return va > 0 && vb > 0 ? cov / std::sqrt(va * vb) : 0.0;
}

namespace {
struct Pair {
  Eigen::Index query, key;
  double dot;
};

// Correlation of q.k with the distance of the embedded q and k; `embedded` holds queries then keys.
double dotDistanceCorrelation(const Eigen::MatrixXd& embedded, Eigen::Index queries, const std::vector<Pair>& pairs) {
  std::vector<double> dots, distances;
  for (const Pair& p : pairs) {
    dots.push_back(p.dot);
    distances.push_back((embedded.row(p.query) - embedded.row(queries + p.key)).norm());
  }
  return pearson(dots, distances);
}
}  // namespace

QkEmbedding qkEmbedding(const Model& model, const Vocabulary& vocabulary, const std::vector<std::vector<int>>& sequences, int layer,
                        int head) {
  const ModelConfig& c = model.config();
  if (layer < 0 || layer >= c.n_layers || head < 0 || head >= c.n_heads)
    throw std::invalid_argument("no head " + std::to_string(head) + " in layer " + std::to_string(layer));
  QkEmbedding e;
  e.layer = layer;
  e.head = head;
  std::vector<Eigen::VectorXd> qs, ks;
  std::vector<Pair> pairs;
  auto ws = makeWorkspace();
  for (size_t s = 0; s < sequences.size(); ++s) {
    const std::vector<int>& tokens = sequences[s];
    const int T = static_cast<int>(tokens.size());
    if (T == 0) continue;
    Trace trace;
    const std::vector<int> targets(T, -1);
    model.forward(*ws, tokens.data(), targets.data(), 1, T, &trace);
    const HeadTrace& ht = trace.layers[layer].heads[head];
    const Eigen::Index base = static_cast<Eigen::Index>(qs.size());
    for (int t = 0; t < T; ++t) {
      qs.push_back(ht.q.row(t).cast<double>().transpose());
      ks.push_back(ht.k.row(t).cast<double>().transpose());
      const int token = tokens[t];
      for (bool query : {true, false}) e.points.push_back({0, 0, 0, query, token, vocabulary.token(token), t, static_cast<int>(s)});
    }
    for (int i = 0; i < T; ++i)
      for (int j = 0; j <= i; ++j) pairs.push_back({base + i, base + j, qs[base + i].dot(ks[base + j])});
  }
  const Eigen::Index n = static_cast<Eigen::Index>(qs.size());
  if (n == 0) throw std::invalid_argument("no tokens to embed");
  const Eigen::Index d = qs[0].size();
  Eigen::MatrixXd joint(2 * n, d);
  for (Eigen::Index i = 0; i < n; ++i) {
    joint.row(i) = qs[i].transpose();
    joint.row(n + i) = ks[i].transpose();
  }
  e.correlation_raw = dotDistanceCorrelation(pca3(joint), n, pairs);

  auto rms = [](const Eigen::MatrixXd& m) { return std::sqrt(m.rowwise().squaredNorm().mean()); };
  const double qRms = rms(joint.topRows(n));
  e.query_scale = qRms > 0 ? 1.0 / qRms : 1.0;
  joint.topRows(n) *= e.query_scale;
  const Eigen::RowVectorXd queryMean = joint.topRows(n).colwise().mean();
  const Eigen::MatrixXd keySpread = joint.bottomRows(n).rowwise() - joint.bottomRows(n).colwise().mean();
  const double spread = rms(keySpread);
  e.key_scale = spread > 0 ? std::sqrt(std::max(0.0, 1.0 - queryMean.squaredNorm())) / spread : 1.0;
  joint.bottomRows(n) = (keySpread * e.key_scale).rowwise() + queryMean;
  const Eigen::MatrixXd embedded = pca3(joint, &e.explained);
  e.correlation_normalised = dotDistanceCorrelation(embedded, n, pairs);
  for (Eigen::Index i = 0; i < n; ++i)
    for (int role = 0; role < 2; ++role) {
      EmbeddedPoint& p = e.points[2 * i + role];
      const Eigen::Index row = role == 0 ? i : n + i;
      p.x = embedded(row, 0);
      p.y = embedded(row, 1);
      p.z = embedded(row, 2);
    }
  return e;
}

namespace {

class QkEmbeddingAnalysis : public Analysis {
 public:
  Json run(Trainer& trainer, const AnalysisOptions& options) const override {
    selectedHeads(trainer.config().model, options);  // range checks
    const int layer = std::max(0, options.layer), head = std::max(0, options.head);
    std::vector<std::vector<int>> sequences = {trainer.probeTokens()};
    const Batch sample = validationBatches(trainer, 1, options.seed).front();
    for (int b = 0; b < std::min(sample.B, 8); ++b)
      sequences.emplace_back(sample.inputs.begin() + b * sample.T, sample.inputs.begin() + (b + 1) * sample.T);
    const QkEmbedding e = qkEmbedding(trainer.model(), trainer.task().vocabulary(), sequences, layer, head);
    Json points = Json::array();
    for (const EmbeddedPoint& p : e.points)
      points.push_back({{"xyz", {p.x, p.y, p.z}},
                        {"role", p.query ? "query" : "key"},
                        {"token", p.token},
                        {"label", p.label},
                        {"position", p.position},
                        {"sequence", p.sequence}});
    return {{"layer", layer},
            {"head", head},
            {"sequences", sequences.size()},
            {"explained_variance", e.explained},
            {"query_scale", e.query_scale},
            {"key_scale", e.key_scale},
            {"correlation_raw", e.correlation_raw},
            {"correlation_normalised", e.correlation_normalised},
            {"points", std::move(points)}};
  }

  std::string describe(const Json& r) const override {
    std::ostringstream out;
    const auto& ex = r["explained_variance"];
    out << "layer " << r["layer"].get<int>() << " head " << r["head"].get<int>() << ": " << r["points"].size() << " points from "
        << r["sequences"].get<int>() << " sequences; PCA axes explain " << ex[0].get<double>() << ", " << ex[1].get<double>()
        << ", " << ex[2].get<double>() << "\n"
        << "corr(q.k, distance): raw " << r["correlation_raw"].get<double>() << ", normalised "
        << r["correlation_normalised"].get<double>() << "\n";
    return out.str();
  }
};

ATTNLAB_REGISTER(AnalysisRegistry, "qk_embedding",
                 "one head's queries and keys jointly in 3D (keys moved to the query mean, norms matched, PCA); corr(q.k, distance)",
                 [] { return std::make_unique<QkEmbeddingAnalysis>(); });

}  // namespace
}  // namespace attnlab
