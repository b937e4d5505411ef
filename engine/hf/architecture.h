#pragma once
// A Hugging Face model_type the lab opens: how its config.json becomes a ModelConfig, and how each
// engine parameter is filled from the folder's tensors. Members register in ArchitectureRegistry
// under their model_type, one file each (arch_*.cpp).
//
// Rotary layout: Hugging Face's RoPE rotates feature i with feature i + r/2 of each head's rotated
// span r ("rotate half"); the engine rotates adjacent pairs (2m, 2m+1) at the same frequency index
// m. The loaders permute the rows of W_q and W_k (and their biases) per head so that engine pair m
// holds Hugging Face features (m, m + r/2). Scores q.k are unchanged by a permutation applied to
// both, so one load-time reordering keeps every kernel, cache and analysis as it is; the trace's
// q/k features are in the engine's order. Exporting applies the inverse (rotaryOrder below).
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "core/registry.h"
#include "core/tensor.h"
#include "config/model_config.h"

namespace attnlab::hf {

using Json = nlohmann::json;

// One engine parameter and where its values come from: the named tensor, of `shape`, read as a
// [rows, cols] matrix ([1, n] for a vector) and turned into the parameter's value by `convert`.
struct WeightSource {
  std::string param;
  std::string tensor;
  std::vector<int64_t> shape;
  std::function<void(const Mat& stored, Mat& value)> convert;
};

class Architecture {
 public:
  virtual ~Architecture() = default;
  // config.json -> config. Returns "" or the reason (a missing or bad key, an unsupported option).
  virtual std::string configure(const Json& config, ModelConfig& out) const = 0;
  // The source of every parameter of a model built from `c`, given the tensor names the folder
  // holds (GPT-2's name layouts differ by a prefix). Returns "" or the reason.
  virtual std::string plan(const ModelConfig& c, const std::set<std::string>& names, std::vector<WeightSource>& out) const = 0;
  // True for stored tensors the engine does not need (causal-mask buffers, cached frequencies, a
  // head tied to the embedding).
  virtual bool ignorable(const std::string& name, const ModelConfig& c) const = 0;
};

using ArchitectureRegistry = Registry<Architecture>;

// Engine row i of a head holds Hugging Face row order[i] (see the rotary layout above): for the
// first `rotated` features of each of `heads` heads of `headDim`, pairs (m, m + rotated/2) become
// adjacent; the rest keep their place.
std::vector<int> rotaryOrder(int heads, int headDim, int rotated);

// ---- helpers for the members ----------------------------------------------------------------

// Reads typed keys of config.json, keeping the first complaint.
class ConfigReader {
 public:
  explicit ConfigReader(const Json& j) : j_(j) {}
  int positive(const char* key);                 // required positive integer
  int positiveOr(const char* key, int fallback);  // optional (absent or null: fallback)
  double number(const char* key, double fallback);
  bool flag(const char* key, bool fallback);
  std::string text(const char* key, const std::string& fallback);
  void fail(std::string why) {
    if (error_.empty()) error_ = std::move(why);
  }
  const std::string& error() const { return error_; }

 private:
  const Json& j_;
  std::string error_;
};

// The default MLP width, 4 x d_model, held in an int (a hostile d_model of 2^30 would overflow it;
// the parameter bound refuses such a model later).
inline int fourTimes(int width) { return width > (1 << 28) ? 1 << 30 : 4 * width; }

// stored -> value conversions.
void copyAs(const Mat& stored, Mat& value);                 // same layout
void transposed(const Mat& stored, Mat& value);             // [in, out] (GPT-2's Conv1D) -> [out, in]
std::function<void(const Mat&, Mat&)> pickRows(std::vector<int> rows);  // value.row(i) = stored.row(rows[i])
std::function<void(const Mat&, Mat&)> pickCols(std::vector<int> cols);  // value(0, i) = stored(0, cols[i]) (a vector)

}  // namespace attnlab::hf
