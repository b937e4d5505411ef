// QK spectrum against known answers: hand-built operators, the small form against the full
// d_model x d_model M, RoPE blocks against the engine's own rotation, the circular law at init.
#include <QtTest>

#include <algorithm>
#include <complex>

#include "analysis/qk_spectrum.h"
#include "core/random.h"
#include "model/model.h"
#include "positional/positional.h"

using namespace attnlab;
using Complex = std::complex<double>;

namespace {
Eigen::MatrixXd randomMatrix(int rows, int cols, Rng& rng) {
  Eigen::MatrixXd m(rows, cols);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) m(i, j) = rng.normal();
  return m;
}

// Sorted by real part, then imaginary part, so two lists of the same values compare elementwise.
std::vector<Complex> sorted(std::vector<Complex> v) {
  std::sort(v.begin(), v.end(), [](Complex a, Complex b) {
    return std::abs(a.real() - b.real()) > 1e-9 ? a.real() < b.real() : a.imag() < b.imag();
  });
  return v;
}

void compareSpectra(const std::vector<Complex>& got, const std::vector<Complex>& want, double tol) {
  QCOMPARE(got.size(), want.size());
  const auto a = sorted(got), b = sorted(want);
  for (size_t i = 0; i < a.size(); ++i)
    QVERIFY2(std::abs(a[i] - b[i]) < tol, qPrintable(QString("eigenvalue %1: got %2%3i, want %4%5i")
                                                         .arg(i).arg(a[i].real()).arg(a[i].imag(), 0, 'g', 6, QChar('+'))
                                                         .arg(b[i].real()).arg(b[i].imag())));
}

ModelConfig smallConfig(int dModel, int heads, int kvHeads, const std::string& sharing, const std::string& positional) {
  ModelConfig c;
  c.vocab = 10;
  c.d_model = dModel;
  c.n_layers = 2;
  c.n_heads = heads;
  c.n_kv_heads = kvHeads;
  c.context = 16;
  c.attention_only = true;
  c.projection_sharing = sharing;
  c.positional = positional;
  return c;
}
}  // namespace

class TestAnalysisSpectrum : public QObject {
  Q_OBJECT

 private slots:
  // M = blockdiag([[1, -2], [2, 1]], 3, -0.5) with W_q = I: eigenvalues 1 +- 2i, 3, -0.5.
  void handBuiltComplexEigenvalues() {
    Eigen::MatrixXd wk = Eigen::MatrixXd::Zero(4, 4);
    wk << 1, -2, 0, 0,  //
        2, 1, 0, 0,     //
        0, 0, 3, 0,     //
        0, 0, 0, -0.5;
    const QkSpectrum s = qkSpectrumOf(Eigen::MatrixXd::Identity(4, 4), wk, {});
    compareSpectra(s.eigenvalues, {{1, 2}, {1, -2}, {3, 0}, {-0.5, 0}}, 1e-12);
    QCOMPARE(std::abs(s.eigenvalues.front()), 3.0);  // by modulus, descending
    QVERIFY(std::abs(s.spectral_radius - 3.0) < 1e-12);
    // imaginary share: (4 + 4) / (5 + 5 + 9 + 0.25)
    QVERIFY(std::abs(s.imaginary_share - 8.0 / 19.25) < 1e-12);
    // skew part: only the 2x2 rotation's off-diagonal: ||A||^2 = 8 of ||M||^2 = 1+4+4+1+9+0.25
    QVERIFY(std::abs(s.skew_energy_share - 8.0 / 19.25) < 1e-12);
    QVERIFY(s.henrici < 1e-7);  // block-diagonal with a normal 2x2 block: normal
  }

  // An orthogonal M has every eigenvalue on the unit circle, singular values 1, and is normal.
  void rotationHasUnitModulusSpectrum() {
    Rng rng(3);
    const Eigen::MatrixXd q = Eigen::HouseholderQR<Eigen::MatrixXd>(randomMatrix(6, 6, rng)).householderQ();
    const QkSpectrum s = qkSpectrumOf(Eigen::MatrixXd::Identity(6, 6), q, {});
    for (Complex l : s.eigenvalues) QVERIFY2(std::abs(std::abs(l) - 1.0) < 1e-10, qPrintable(QString::number(std::abs(l))));
    for (double v : s.singular_values) QVERIFY(std::abs(v - 1.0) < 1e-10);
    QVERIFY(s.henrici < 1e-6);
    QVERIFY(s.imaginary_share > 0.1);  // a random rotation turns: complex pairs
  }

  // W_q = W_k: M = W^T W is symmetric: no skew energy, real non-negative eigenvalues.
  void symmetricHasNoSkewAndRealSpectrum() {
    Rng rng(5);
    const Eigen::MatrixXd w = randomMatrix(4, 10, rng);
    const QkSpectrum s = qkSpectrumOf(w, w, {});
    QVERIFY(s.skew_energy_share < 1e-12);
    QCOMPARE(s.imaginary_share, 0.0);
    for (Complex l : s.eigenvalues) {
      QCOMPARE(l.imag(), 0.0);
      QVERIFY(l.real() > 0);
    }
    QVERIFY(s.henrici < 1e-6);
  }

  // The small form's eigenvalues are the nonzero eigenvalues of the full M = W_q^T W_k, and the
  // singular values, skew share and Henrici departure agree with the full M's.
  void smallFormMatchesFullMatrix() {
    Rng rng(7);
    const Eigen::MatrixXd wq = randomMatrix(5, 12, rng), wk = randomMatrix(5, 12, rng);
    const Eigen::MatrixXd m = wq.transpose() * wk;
    const QkSpectrum s = qkSpectrumOf(wq, wk, {});
    Eigen::EigenSolver<Eigen::MatrixXd> full(m, false);
    std::vector<Complex> nonzero;
    for (Eigen::Index i = 0; i < m.rows(); ++i)
      if (std::abs(full.eigenvalues()(i)) > 1e-8) nonzero.push_back(full.eigenvalues()(i));
    compareSpectra(s.eigenvalues, nonzero, 1e-8);
    const Eigen::VectorXd sv = Eigen::JacobiSVD<Eigen::MatrixXd>(m).singularValues();
    QCOMPARE(s.singular_values.size(), size_t(5));
    for (int i = 0; i < 5; ++i) QVERIFY(std::abs(s.singular_values[i] - sv(i)) < 1e-9);
    for (int i = 5; i < sv.size(); ++i) QVERIFY(sv(i) < 1e-9);
    const Eigen::MatrixXd skew = (m - m.transpose()) / 2;
    QVERIFY(std::abs(s.skew_energy_share - skew.squaredNorm() / m.squaredNorm()) < 1e-12);
    double eigSq = 0;
    for (Complex l : nonzero) eigSq += std::norm(l);
    QVERIFY(std::abs(s.henrici - std::sqrt(m.squaredNorm() - eigSq) / m.norm()) < 1e-9);
    QVERIFY(std::abs(s.frobenius - m.norm()) < 1e-9);
  }

  // A freshly initialised model is a random draw: every head's spectral radius is within 20% of
  // the circular-law radius s^2 sqrt(d_model d_head) (d_head = 64 here), and the eigenvalues spread
  // over the complex plane (imaginary share between 0.3 and 0.6; 1/2 for an isotropic disk). S is a
  // product of two random matrices, so inside the disk its density leans towards 0 (Henrici ~0.9).
  void initialSpectrumFollowsCircularLaw() {
    const ModelConfig c = smallConfig(128, 2, 0, "qkv", "rope");
    const Model model(c, 11);
    std::vector<std::pair<int, int>> heads = {{0, 0}, {0, 1}, {1, 0}, {1, 1}};
    const QkSpectrumReport r = qkSpectra(c, model.params(), heads, 12);
    QVERIFY(std::abs(r.null.init_std - 0.02) < 0.001);
    QVERIFY(std::abs(r.null.circular_radius - 0.02 * 0.02 * std::sqrt(128.0 * 64)) < 0.05 * r.null.circular_radius);
    for (const QkSpectrum& s : r.heads) {
      const double ratio = s.spectral_radius / r.null.circular_radius;
      qInfo("head %d.%d: radius / circular radius %.3f, imaginary share %.3f, Henrici %.3f", s.layer, s.head, ratio,
            s.imaginary_share, s.henrici);
      QVERIFY2(ratio > 0.8 && ratio < 1.2, qPrintable(QString::number(ratio)));
      QVERIFY2(s.imaginary_share > 0.3 && s.imaginary_share < 0.6, qPrintable(QString::number(s.imaginary_share)));
    }
    QCOMPARE(r.null_draw.size(), heads.size());
    QCOMPARE(r.null_draw[0].size(), size_t(64));
  }

  // Under RoPE, sum_m 2 (re_m cos(theta_m D) - im_m sin(theta_m D)) is tr(W_q^T R(D) W_k): the
  // score of one input against itself D positions later, through the engine's own rotation.
  void ropeBlocksPredictTheRotatedScore() {
    const ModelConfig c = smallConfig(16, 2, 0, "qkv", "rope");
    const std::vector<double> freq = ropeFrequencies(c, 0);
    QCOMPARE(freq.size(), size_t(4));  // d_head 8: 4 pairs
    QCOMPARE(freq[0], 1.0);
    Rng rng(13);
    const Eigen::MatrixXd wq = randomMatrix(8, 16, rng), wk = randomMatrix(8, 16, rng);
    const QkSpectrum s = qkSpectrumOf(wq, wk, freq);
    QCOMPARE(s.rope.size(), size_t(4));
    for (int delta : {-3, -1, 0, 2, 5}) {
      double predicted = 0;
      for (const RopeBlock& b : s.rope) {
        predicted += 2 * (b.re * std::cos(b.frequency * delta) - b.im * std::sin(b.frequency * delta));
        QVERIFY(std::abs(std::atan2(b.im, b.re) - b.phase) < 1e-12);
      }
      // Rotate each column of wq by angle i = 0 and of wk by angle j = delta, as the engine turns q_i and k_j.
      Mat k = wk.transpose().cast<float>();  // rows: the 16 basis inputs' keys
      std::vector<float> angles;
      for (int row = 0; row < 16; ++row)
        for (double f : freq) angles.push_back(static_cast<float>(f * delta));
      rotatePairs(k.data(), 16, 8, angles.data(), 4, false);
      const double direct = (wq.transpose().cast<float>().cwiseProduct(k)).cast<double>().sum();  // sum_x q(x) . R k(x)
      QVERIFY2(std::abs(direct - predicted) < 1e-3 * (1 + std::abs(direct)),
               qPrintable(QString("offset %1: direct %2, from blocks %3").arg(delta).arg(direct).arg(predicted)));
    }
    // A block a I + b J is all rotation-commuting: re a, im b, no conjugate part.
    Eigen::MatrixXd wq2 = Eigen::MatrixXd::Identity(2, 2), wk2(2, 2);
    wk2 << 0.6, -0.8, 0.8, 0.6;
    const QkSpectrum r = qkSpectrumOf(wq2, wk2, {0.5});
    QVERIFY(std::abs(r.rope[0].re - 0.6) < 1e-12 && std::abs(r.rope[0].im - 0.8) < 1e-12 && r.rope[0].conjugate < 1e-12);
    QVERIFY(std::abs(r.rope_rotational_share - 0.64) < 1e-12);
    QVERIFY(ropeFrequencies(smallConfig(16, 2, 0, "qkv", "learned"), 0).empty());
    ModelConfig mixed = smallConfig(16, 2, 0, "qkv", "rope");
    mixed.attention = {"linear", "softmax"};  // the linear layer's scores are not rotated
    QVERIFY(ropeFrequencies(mixed, 0).empty());
    QCOMPARE(ropeFrequencies(mixed, 1).size(), size_t(4));
  }

  // Shared and grouped projections: q=k gives W_q = W_k (symmetric M); GQA reads the group's key head.
  void sharedAndGroupedProjections() {
    const ModelConfig shared = smallConfig(16, 4, 2, "q=k_v", "rope");
    const Model a(shared, 1);
    const HeadProjections p = headProjections(shared, a.params(), 1, 3);
    QVERIFY(p.queryIsKey);
    QVERIFY(p.wq == p.wk);
    const Mat& wqk = a.params().find("blocks.1.attn.wqk.weight")->value;
    QVERIFY(p.wk == wqk.middleRows(4, 4).cast<double>());  // head 3 is in KV group 1 (d_head 4)
    QVERIFY(qkSpectrumOf(p.wq, p.wk, {}).skew_energy_share < 1e-12);

    const ModelConfig grouped = smallConfig(16, 4, 2, "qkv", "none");
    const Model b(grouped, 1);
    const HeadProjections g = headProjections(grouped, b.params(), 0, 2);
    QVERIFY(g.wq == b.params().find("blocks.0.attn.wq.weight")->value.middleRows(8, 4).cast<double>());
    QVERIFY(g.wk == b.params().find("blocks.0.attn.wk.weight")->value.middleRows(4, 4).cast<double>());
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, headProjections(grouped, b.params(), 2, 0));

    // A series over two snapshots: the same model twice gives the same spectra.
    const auto series = qkSpectrumSeries(grouped, {&b.params(), &b.params()});
    QCOMPARE(series.size(), size_t(2));
    QCOMPARE(series[1].size(), size_t(8));
    QCOMPARE(series[0][5].spectral_radius, series[1][5].spectral_radius);
  }
};

QTEST_APPLESS_MAIN(TestAnalysisSpectrum)
#include "test_analysis_spectrum.moc"
