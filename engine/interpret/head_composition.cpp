#include "interpret/head_composition.h"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <sstream>

#include "interpret/interpret_support.h"
#include "interpret/interpretation.h"

namespace attnlab {
namespace {

using Md = Eigen::MatrixXd;

// |A^T C B|_F for A [r, d] and B [s, d] given the Gram matrices GA = A A^T, GB = B B^T:
// |A^T C B|_F^2 = tr(B^T C^T A A^T C B) = tr(C^T GA C GB).
double frobeniusThrough(const Md& gramLeft, const Md& middle, const Md& gramRight) {
  return std::sqrt(std::max(0.0, (middle.transpose() * gramLeft * middle * gramRight).trace()));
}

struct HeadFactors {
  HeadWeights w;
  Md gq, gk, gv, goo;  // q q^T, k k^T, v v^T (d_head x d_head) and o^T o
  double qkNorm, ovNorm;
};

HeadFactors factorsOf(const Model& model, int layer, int head) {
  HeadFactors f{headWeights(model, layer, head), {}, {}, {}, {}, 0, 0};
  f.gq = f.w.q * f.w.q.transpose();
  f.gk = f.w.k * f.w.k.transpose();
  f.gv = f.w.v * f.w.v.transpose();
  f.goo = f.w.o.transpose() * f.w.o;
  f.qkNorm = std::sqrt(std::max(0.0, (f.gq * f.gk).trace()));  // |q^T k|_F
  f.ovNorm = std::sqrt(std::max(0.0, (f.goo * f.gv).trace()));  // |o v|_F
  return f;
}

double ratio(double num, double den) { return den > 0 ? num / den : 0.0; }

}  // namespace

HeadComposition headComposition(const Model& model) {
  const ModelConfig& c = model.config();
  std::vector<std::vector<HeadFactors>> heads(c.n_layers);
  for (int l = 0; l < c.n_layers; ++l)
    for (int h = 0; h < c.n_heads; ++h) heads[l].push_back(factorsOf(model, l, h));

  HeadComposition out;
  for (int l1 = 0; l1 < c.n_layers; ++l1)
    for (int h1 = 0; h1 < c.n_heads; ++h1)
      for (int l2 = l1 + 1; l2 < c.n_layers; ++l2)
        for (int h2 = 0; h2 < c.n_heads; ++h2) {
          const HeadFactors &a = heads[l1][h1], &b = heads[l2][h2];
          // K: q2^T (k2 o1) v1; Q: k2^T (q2 o1) v1; V: o2 (v2 o1) v1.
          const double k = frobeniusThrough(b.gq, b.w.k * a.w.o, a.gv);
          const double q = frobeniusThrough(b.gk, b.w.q * a.w.o, a.gv);
          const double v = frobeniusThrough(b.goo, b.w.v * a.w.o, a.gv);
          out.pairs.push_back({l1, h1, l2, h2, ratio(q, b.qkNorm * a.ovNorm), ratio(k, b.qkNorm * a.ovNorm), ratio(v, b.ovNorm * a.ovNorm)});
        }

  // The nonzero eigenvalues of U o v E^T are those of v (E^T U) o, a d_head x d_head matrix.
  const Md embedToUnembed = embedding(model).transpose() * foldedUnembedding(model);  // E^T U [d, d]
  out.copying.assign(c.n_layers, std::vector<double>(c.n_heads, 0.0));
  for (int l = 0; l < c.n_layers; ++l)
    for (int h = 0; h < c.n_heads; ++h) {
      const HeadWeights& w = heads[l][h].w;
      const Eigen::VectorXcd lambda = Eigen::EigenSolver<Md>(w.v * embedToUnembed * w.o, false).eigenvalues();
      out.copying[l][h] = ratio(lambda.real().sum(), lambda.cwiseAbs().sum());
    }
  return out;
}

namespace {

class CompositionInterpretation : public Interpretation {
 public:
  Json run(const Model& model, const InterpretRequest&) const override {
    const HeadComposition hc = headComposition(model);
    Json rows = Json::array();
    for (const CompositionScore& s : hc.pairs)
      rows.push_back({{"from_layer", s.from_layer}, {"from_head", s.from_head}, {"layer", s.to_layer}, {"head", s.to_head}, {"q", s.q}, {"k", s.k}, {"v", s.v}});
    Json copying = Json::array();
    for (size_t l = 0; l < hc.copying.size(); ++l)
      for (size_t h = 0; h < hc.copying[l].size(); ++h) copying.push_back({{"layer", l}, {"head", h}, {"value", hc.copying[l][h]}});
    return {{"results", std::move(rows)}, {"copying", std::move(copying)}};
  }
  std::string describe(const Json& j) const override {
    std::ostringstream out;
    for (const char* kind : {"q", "k", "v"}) {
      const Json* best = nullptr;
      for (const Json& row : j["results"])
        if (!best || row[kind].get<double>() > (*best)[kind].get<double>()) best = &row;
      if (best)
        out << "strongest " << kind << "-composition: L" << (*best)["from_layer"].get<int>() << "H" << (*best)["from_head"].get<int>()
            << " -> L" << (*best)["layer"].get<int>() << "H" << (*best)["head"].get<int>() << " (" << (*best)[kind].get<double>() << ")\n";
    }
    out << "OV copying score per head:";
    for (const Json& c : j["copying"]) out << " L" << c["layer"].get<int>() << "H" << c["head"].get<int>() << " " << c["value"].get<double>();
    return out.str() + "\n";
  }
  std::string inputs() const override { return "(weights only)"; }
};

ATTNLAB_REGISTER(InterpretationRegistry, "composition",
                 "head composition: Q/K/V Frobenius ratios between heads of different layers, and each head's OV copying score",
                 [] { return std::make_unique<CompositionInterpretation>(); });

}  // namespace

}  // namespace attnlab
