#include "model/ops.h"

#include <algorithm>
#include <cmath>

#include "core/gemm.h"
#include "core/threads.h"

namespace attnlab::ops {

namespace {
// Runs f(first, count) over contiguous row ranges, one range per OpenMP thread, each range a
// single-threaded product. No thread then waits on another's packed blocks, as threads do inside
// Eigen's own parallel product: those spinning waits cost about 10x the CPU time per step on a
// loaded 2-core machine (Trainer keeps Eigen single-threaded). Inside a parallel region, for
// fewer than 2 x kMinRows rows, or for less work than kMinParallelMultiplyAdds, it is one call.
constexpr Eigen::Index kMinRows = 64;
template <class F>
void forEachRowRange(Eigen::Index rows, double multiplyAddsPerRow, F&& f) {
  const bool worthThreads = !inParallelRegion() && static_cast<double>(rows) * multiplyAddsPerRow >= kMinParallelMultiplyAdds;
  const int parts = worthThreads ? static_cast<int>(std::min<Eigen::Index>(maxThreads(), rows / kMinRows)) : 1;
  if (parts <= 1) {
    f(Eigen::Index(0), rows);
    return;
  }
#pragma omp parallel for num_threads(parts) schedule(static)
  for (int p = 0; p < parts; ++p) {
    const Eigen::Index first = rows * p / parts;
    f(first, rows * (p + 1) / parts - first);
  }
}

// The same over output columns, for products with many more outputs than rows (the LM head of a
// prefill or a decoding step): split over rows, each thread would pack all of W. One call
// below about 4 M multiply-adds, where waking a second thread costs more than it saves.
template <class F>
void forEachColumnRange(Eigen::Index rows, Eigen::Index cols, Eigen::Index depth, F&& f) {
  const bool worthThreads = !inParallelRegion() && static_cast<double>(rows) * cols * depth >= 4.0e6;
  const int parts = worthThreads ? static_cast<int>(std::min<Eigen::Index>(maxThreads(), cols / kMinRows)) : 1;
  if (parts <= 1) {
    f(Eigen::Index(0), cols);
    return;
  }
#pragma omp parallel for num_threads(parts) schedule(static)
  for (int p = 0; p < parts; ++p) {
    const Eigen::Index first = cols * p / parts;
    f(first, cols * (p + 1) / parts - first);
  }
}
}  // namespace

void linearForward(const Mat& x, const Mat& W, const Mat* b, Mat& y) {
  y.resize(x.rows(), W.rows());
  if (W.rows() >= 8 * x.rows()) {
    forEachColumnRange(x.rows(), W.rows(), W.cols(), [&](Eigen::Index first, Eigen::Index n) {
      auto cols = y.middleCols(first, n);
      gemm::multiply(gemm::mutView(cols), gemm::view(x), gemm::view(W.middleRows(first, n)).t());
      if (b && b->size()) cols.rowwise() += b->middleCols(first, n).row(0);
    });
    return;
  }
  forEachRowRange(x.rows(), static_cast<double>(W.rows()) * W.cols(), [&](Eigen::Index first, Eigen::Index n) {
    auto rows = y.middleRows(first, n);
    gemm::multiply(gemm::mutView(rows), gemm::view(x.middleRows(first, n)), gemm::view(W).t());
    if (b && b->size()) rows.rowwise() += b->row(0);
  });
}

void linearBackward(const Mat& dy, const Mat& x, const Mat& W, Mat* dx, Mat& dW, Mat* db) {
  if (dx) {
    dx->resize(dy.rows(), W.cols());
    forEachRowRange(dy.rows(), static_cast<double>(W.rows()) * W.cols(), [&](Eigen::Index first, Eigen::Index n) {
      gemm::multiply(gemm::mutView(dx->middleRows(first, n)), gemm::view(dy.middleRows(first, n)), gemm::view(W));  // from y = x W^T
    });
  }
  forEachRowRange(dW.rows(), static_cast<double>(dy.rows()) * x.cols(), [&](Eigen::Index first, Eigen::Index n) {  // split over outputs: no reduction across threads
    gemm::multiply(gemm::mutView(dW.middleRows(first, n)), gemm::view(dy.middleCols(first, n)).t(), gemm::view(x), 1.0f,
                   1.0f);  // dW += dy^T x, from y = x W^T
  });
  if (db && db->size()) db->row(0) += dy.colwise().sum();  // from y += b
}

// Fewer rows (a decoding step, a short probe) stay on one thread: waking another costs more.
constexpr int kMinParallelNormRows = 256;

void layerNormForward(const Mat& x, const Mat& w, const Mat& b, Mat& y, Vec& mean, Vec& rstd, float eps) {
  const int N = static_cast<int>(x.rows()), C = static_cast<int>(x.cols());
  y.resize(N, C);
  mean.resize(N);
  rstd.resize(N);
  forEachIndex(N, N >= kMinParallelNormRows, [&](int n) {  // rows are independent
    auto row = x.row(n);
    const float m = row.mean();
    const float var = (row.array() - m).square().mean();
    const float r = 1.0f / std::sqrt(var + eps);
    mean[n] = m;
    rstd[n] = r;
    y.row(n) = (((row.array() - m) * r) * w.row(0).array()).matrix();
    if (b.size()) y.row(n) += b.row(0);
  });
}

void layerNormBackward(const Mat& dy, const Mat& x, const Mat& w, const Vec& mean, const Vec& rstd, Mat& dx, Mat& dw,
                       Mat& db) {
  const int N = static_cast<int>(x.rows());
  const float C = static_cast<float>(x.cols());
  // dw and db sum over the rows: in row order on one thread, so the sums do not depend on threads.
  for (int n = 0; n < N; ++n) {
    dw.row(0).array() += dy.row(n).array() * ((x.row(n).array() - mean[n]) * rstd[n]);  // from y = xhat * w + b
    if (db.size()) db.row(0).array() += dy.row(n).array();
  }
  // dx: each row on its own (fixed per-thread buffers, no allocation per row).
#pragma omp parallel if (N >= kMinParallelNormRows && !inParallelRegion())
  {
    Eigen::Array<float, 1, Eigen::Dynamic> xhat(x.cols()), dxhat(x.cols());
#pragma omp for schedule(static)
    for (int n = 0; n < N; ++n) {
      xhat = (x.row(n).array() - mean[n]) * rstd[n];
      dxhat = dy.row(n).array() * w.row(0).array();  // from y = xhat * w + b
      // from xhat = (x - mean) * rstd, with mean and rstd depending on every x of the row
      const float meanDxhat = dxhat.sum() / C;
      const float meanDxhatXhat = (dxhat * xhat).sum() / C;
      dx.row(n).array() += rstd[n] * (dxhat - meanDxhat - xhat * meanDxhatXhat);
    }
  }
}

namespace {
constexpr float kGeluC = 0.7978845608028654f;  // sqrt(2/pi)
}

// Both run over blocks of kGeluBlock values: tanh stays vectorised (Eigen) and the backward needs
// no whole-matrix temporaries (each would be a fresh [N, d_ff] allocation per step); blocks are
// independent, so threads share them when there are several (a decoding step's one row is a
// single block: waking a second thread for it cost a third of the step).
constexpr Eigen::Index kGeluBlock = 512;

void geluForward(const Mat& x, Mat& y) {
  y.resize(x.rows(), x.cols());
  const Eigen::Index n = x.size();
  const int blocks = static_cast<int>((n + kGeluBlock - 1) / kGeluBlock);
  forEachIndex(blocks, true, [&](int block) {
    const Eigen::Index start = block * kGeluBlock, len = std::min(kGeluBlock, n - start);
    const Eigen::Map<const Eigen::ArrayXf> xs(x.data() + start, len);
    Eigen::Map<Eigen::ArrayXf>(y.data() + start, len) = 0.5f * xs * (1.0f + (kGeluC * (xs + 0.044715f * xs.cube())).tanh());
  });
}

void geluBackward(const Mat& dy, const Mat& x, Mat& dx) {
  dx.resize(x.rows(), x.cols());
  const Eigen::Index n = x.size();
  const int blocks = static_cast<int>((n + kGeluBlock - 1) / kGeluBlock);
  forEachIndex(blocks, true, [&](int block) {
    const Eigen::Index start = block * kGeluBlock, len = std::min(kGeluBlock, n - start);
    const Eigen::Map<const Eigen::ArrayXf> xs(x.data() + start, len), dys(dy.data() + start, len);
    float tanhU[kGeluBlock];
    Eigen::Map<Eigen::ArrayXf> t(tanhU, len);
    t = (kGeluC * (xs + 0.044715f * xs.cube())).tanh();  // t = tanh u, u = c (x + 0.044715 x^3)
    // d/dx [0.5 x (1 + tanh u)] = 0.5 (1 + tanh u) + 0.5 x (1 - tanh^2 u) du/dx
    Eigen::Map<Eigen::ArrayXf>(dx.data() + start, len) =
        dys * (0.5f * (1.0f + t) + 0.5f * xs * (1.0f - t.square()) * (kGeluC * (1.0f + 3.0f * 0.044715f * xs.square())));
  });
}

double crossEntropyForward(const Mat& logits, const int* targets, Mat& probs, int& counted) {
  const int N = static_cast<int>(logits.rows());
  probs.resize(logits.rows(), logits.cols());
  double total = 0;
  counted = 0;
  for (int n = 0; n < N; ++n) {
    const float maxLogit = logits.row(n).maxCoeff();
    probs.row(n) = (logits.row(n).array() - maxLogit).exp().matrix();
    const float sum = probs.row(n).sum();
    probs.row(n) /= sum;
    if (targets[n] < 0) continue;
    total += -(static_cast<double>(logits(n, targets[n])) - maxLogit - std::log(static_cast<double>(sum)));
    ++counted;
  }
  return counted ? total / counted : 0.0;
}

void crossEntropyBackward(const Mat& probs, const int* targets, int counted, Mat& dlogits) {
  dlogits.setZero(probs.rows(), probs.cols());
  if (!counted) return;
  const float inv = 1.0f / static_cast<float>(counted);
  for (int n = 0; n < probs.rows(); ++n) {
    if (targets[n] < 0) continue;
    dlogits.row(n) = probs.row(n) * inv;  // from loss = -log softmax(logits)[target] / counted
    dlogits(n, targets[n]) -= inv;
  }
}

}  // namespace attnlab::ops
