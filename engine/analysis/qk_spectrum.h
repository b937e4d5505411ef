#pragma once
// The spectrum of a head's query-key operator M = W_q,h^T W_k,h (score(i, j) = x_i^T M x_j / sqrt(d_h)
// before positional bias). M is d_model x d_model of rank <= d_h; its nonzero eigenvalues are those of
// the small form S = W_k,h W_q,h^T (d_h x d_h), which is where everything here is computed.
// Under RoPE the score also turns pair m of q and k by theta_m (j - i); the 2x2 diagonal block B_m of
// S then contributes 2 |z_m| cos(theta_m (j - i) + arg z_m) for isotropic inputs, with
// z_m = (B00 + B11)/2 + i (B10 - B01)/2: the rotation-commuting part of B_m as a complex number.
#include <complex>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "config/model_config.h"
#include "core/params.h"

namespace attnlab {

// The head's query and key projections, [d_h, d_model] each, whatever the projection sharing:
// wk comes from the key tensor (wk, wkv, wqk or wqkv) of the head's KV group; wq from wq, or is wk
// when queries are keys. Throws std::invalid_argument when a tensor is missing or misshaped.
struct HeadProjections {
  Eigen::MatrixXd wq, wk;
  bool queryIsKey = false;
};
HeadProjections headProjections(const ModelConfig& config, const ParamStore& params, int layer, int head);

struct RopeBlock {
  double frequency = 0;   // theta_m: radians per position
  Eigen::Matrix2d block;  // B_m
  double re = 0, im = 0;  // z_m
  double phase = 0;       // arg z_m; the score of this pair peaks at offset j - i = -phase / frequency
  double conjugate = 0;   // size of the part of B_m that anti-commutes with rotations (averages out)
};

struct QkSpectrum {
  int layer = 0, head = 0;
  std::vector<std::complex<double>> eigenvalues;  // of S (the nonzero eigenvalues of M), by modulus, descending
  std::vector<double> singular_values;            // of M (its d_h largest; the rest are 0), descending
  double frobenius = 0;                           // ||M||_F
  double spectral_radius = 0;                     // max |lambda|
  double skew_energy_share = 0;  // ||A||^2 / ||M||^2 for M = S_sym + A, A = (M - M^T)/2
  double henrici = 0;            // departure from normality sqrt(||M||^2 - sum |lambda|^2) / ||M||
  double imaginary_share = 0;    // sum Im(lambda)^2 / sum |lambda|^2: 0 real, ~1/2 Ginibre, 1 pure rotation
  std::vector<RopeBlock> rope;   // per rotated pair, under RoPE only
  double rope_rotational_share = 0;  // sum im^2 / sum |z|^2 over the pairs (0 without RoPE)
};

// The spectrum of M = wq^T wk ([d_h, d] each). `ropeFrequencies` (may be empty) gives theta_m for
// the first pairs of the head dimension.
QkSpectrum qkSpectrumOf(const Eigen::MatrixXd& wq, const Eigen::MatrixXd& wk, const std::vector<double>& ropeFrequencies);

// theta_m of each rotated pair of `layer` under RoPE: empty for any other positional encoding, and
// for a layer whose attention has no dot-product scores to rotate (linear, static_map, deltanet...),
// which AttentionLayer leaves unrotated.
std::vector<double> ropeFrequencies(const ModelConfig& config, int layer);

// The random-matrix null at the model's initial scale: with entries of W_q, W_k drawn N(0, s^2),
// S has iid-like entries of variance d_model s^4, so its eigenvalues fill the disk of radius
// s^2 sqrt(d_model d_h) (circular law). `draw` holds the eigenvalues of the same head in a freshly
// initialised model of the same configuration, for overlay.
struct GinibreNull {
  double init_std = 0;        // s, measured on the fresh model's key projection
  double circular_radius = 0;
  bool symmetric = false;     // queries are keys: S = W W^T is symmetric, its null is real (not a disk)
};
GinibreNull ginibreNull(const ModelConfig& config, const ParamStore& freshParams);

struct QkSpectrumReport {
  GinibreNull null;
  std::vector<QkSpectrum> heads;                          // as selected
  std::vector<std::vector<std::complex<double>>> null_draw;  // per selected head, from the fresh model
};
// `heads` lists (layer, head); the fresh model is built from `config` with `nullSeed`.
QkSpectrumReport qkSpectra(const ModelConfig& config, const ParamStore& params, const std::vector<std::pair<int, int>>& heads,
                           uint64_t nullSeed);

// A series over training snapshots, for animating the spectrum: one spectrum list per snapshot.
std::vector<std::vector<QkSpectrum>> qkSpectrumSeries(const ModelConfig& config, const std::vector<const ParamStore*>& snapshots);
// The same over checkpoint folders (all of one configuration). Returns "" or a one-line reason.
std::string qkSpectrumSeries(const std::vector<std::string>& folders, std::vector<std::vector<QkSpectrum>>& out);

}  // namespace attnlab
