#include "hf/hf_model.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include "hf/architecture.h"
#include "hf/tensor_file.h"
#include "core/available_memory.h"
#include "core/files.h"
#include "core/folder_links.h"
#include "core/json_limits.h"
#include "train/memory_estimate.h"

namespace attnlab::hf {

namespace fs = std::filesystem;

namespace {

std::string shapeText(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// Every tensor header of the folder's weight files.
std::string readWeightHeaders(const std::string& dir, std::vector<TensorEntry>& entries, uint64_t& fileBytes) {
  std::vector<std::string> files;
  const fs::path root(dir);
  std::error_code ec;
  if (fs::exists(root / "model.safetensors.index.json", ec)) {
    if (std::string why = readShardIndex(dir, files); !why.empty()) return why;
  } else if (fs::exists(root / "model.safetensors", ec)) {
    files = {"model.safetensors"};
  } else if (fs::exists(root / "pytorch_model.bin", ec)) {
    return (root / "pytorch_model.bin").string() + ": PyTorch pickles are not read (only safetensors); save the model with safetensors";
  } else {
    return dir + ": no model.safetensors or model.safetensors.index.json";
  }
  fileBytes = 0;
  for (const auto& f : files) {
    const std::string path = (root / f).string();
    if (std::string why = readTensorHeader(path, entries); !why.empty()) return why;
    fileBytes += fs::file_size(path, ec);
  }
  return {};
}

// True when `s` copies a whole tensor of `elements` values into `param` as it is stored.
bool isPlainCopy(const WeightSource& s, const Param& param, uint64_t elements) {
  using Conversion = void (*)(const Mat&, Mat&);
  const Conversion* f = s.convert.target<Conversion>();
  return f && *f == &copyAs && static_cast<uint64_t>(param.value.size()) == elements;
}

std::string mostCommonDtype(const std::vector<TensorEntry>& entries) {
  std::map<std::string, uint64_t> bytes;
  for (const auto& e : entries) bytes[e.dtype] += e.bytes;
  std::string best;
  for (const auto& [dtype, n] : bytes)
    if (best.empty() || n > bytes[best]) best = dtype;
  return best;
}

// The parameters of a model built from `c`, in T: double for a bound that cannot wrap, as sizes of
// up to 2^30 each multiply past 2^64.
template <class T>
T countParameters(const ModelConfig& c) {
  const T d = c.d_model, V = c.vocab, ff = c.d_ff, q = T(c.n_heads) * c.headDim(), kv = T(c.kvHeads()) * c.headDim();
  const T norm = c.norm == "layernorm" ? 2 * d : d;
  const bool glu = c.mlp == "swiglu";
  T block = norm + d * (q + 2 * kv) + q * d + (c.qkv_bias ? q + 2 * kv : 0) + (c.out_bias ? d : 0);
  if (!c.attention_only) block += norm + (glu ? 3 : 2) * d * ff + (c.mlp_bias ? (glu ? 2 : 1) * ff + d : 0);
  return V * d * (c.tied_embeddings ? 1 : 2) + (c.positional == "learned" ? T(c.context) * d : 0) + T(c.n_layers) * block + norm;
}

std::string scientific(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2g", value);
  return text;
}

// 2^50 parameters (4 PiB as float32): past any machine, and far below where the byte counts wrap.
constexpr double kMostParameters = 1125899906842624.0;

// "" when the opened model fits the free memory (or that is unknown), else the one-line refusal.
// An opened model holds no gradients until it trains.
std::string refuseBeyondMemory(const std::string& dir, const HfModelInfo& info) {
  const int tokens = std::min(info.config.context, kOpeningTokens);
  InferenceEstimate need;
  if (std::string why = estimateInference(info.config, tokens, false, need); !why.empty())
    return (fs::path(dir) / "config.json").string() + ": cannot build the model (" + why + ")";
  const uint64_t free = availableMemoryBytes();
  if (!free || need.totalBytes() <= double(free)) return {};
  return dir + ": the model needs about " + memoryText(need.totalBytes()) + " (" + std::to_string(info.parameters) +
         " parameters as float32, their KV cache and one forward's activations at " + std::to_string(tokens) + " tokens) but only " +
         memoryText(double(free)) + " of memory are free";
}

}  // namespace

bool isHfFolder(const std::string& dir) {
  std::string text;
  if (!readWholeFile((fs::path(dir) / "config.json").string(), text).empty() || !checkJsonDepth(text).empty()) return false;
  const Json j = Json::parse(text, nullptr, false);
  return j.is_object() && j.contains("model_type");
}

std::string supportedArchitectures() { return ArchitectureRegistry::instance().names(); }

std::string readHfConfig(const std::string& dir, HfModelInfo& info) {
  const std::string path = (fs::path(dir) / "config.json").string();
  if (std::string why = checkLinksStayInFolder(dir); !why.empty()) return why;
  std::string text;
  if (std::string why = readWholeFile(path, text); !why.empty()) return why;
  if (std::string why = checkJsonDepth(text); !why.empty()) return path + ": " + why;
  const Json j = Json::parse(text, nullptr, false);
  if (j.is_discarded()) return path + ": not valid JSON";
  if (!j.is_object() || !j.contains("model_type") || !j["model_type"].is_string())
    return path + ": has no model_type (not a Hugging Face model folder?)";
  info.dir = dir;
  info.model_type = j["model_type"].get<std::string>();
  auto arch = ArchitectureRegistry::instance().create(info.model_type);
  if (!arch)
    return path + ": model_type \"" + info.model_type + "\" is not supported (supported: " + supportedArchitectures() + ")";
  info.config = ModelConfig{};
  info.config.attention = {"softmax"};
  if (std::string why = arch->configure(j, info.config); !why.empty()) return path + ": " + info.model_type + " " + why;
  if (const double count = countParameters<double>(info.config); count > kMostParameters)
    return path + ": the model would have about " + scientific(count) + " parameters, more than any machine holds";
  info.parameters = parameterCount(info.config);
  return {};
}

std::string readHfInfo(const std::string& dir, HfModelInfo& info) {
  if (std::string why = readHfConfig(dir, info); !why.empty()) return why;
  std::vector<TensorEntry> entries;
  if (std::string why = readWeightHeaders(dir, entries, info.file_bytes); !why.empty()) return why;
  info.dtype = mostCommonDtype(entries);
  info.tensor_names.clear();
  for (const auto& e : entries) info.tensor_names.insert(e.name);
  return {};
}

uint64_t parameterCount(const ModelConfig& c) { return countParameters<uint64_t>(c); }

std::string openHfModel(const std::string& dir, std::unique_ptr<Model>& model, HfModelInfo& info,
                        const std::function<bool(double)>& progress) {
  if (std::string why = readHfConfig(dir, info); !why.empty()) return why;
  if (std::string why = refuseBeyondMemory(dir, info); !why.empty()) return why;

  std::vector<TensorEntry> entries;
  if (std::string why = readWeightHeaders(dir, entries, info.file_bytes); !why.empty()) return why;
  info.dtype = mostCommonDtype(entries);
  std::map<std::string, const TensorEntry*> byName;
  std::set<std::string> names;
  for (const auto& e : entries) {
    if (!byName.emplace(e.name, &e).second) return e.path + ": tensor " + e.name + " is stored twice";
    names.insert(e.name);
  }
  info.tensor_names = names;
  auto arch = ArchitectureRegistry::instance().create(info.model_type);
  std::vector<WeightSource> plan;
  if (std::string why = arch->plan(info.config, names, plan); !why.empty()) return dir + ": " + why;
  std::set<std::string> used;
  for (const auto& s : plan) {
    auto it = byName.find(s.tensor);
    if (it == byName.end()) return dir + ": weight " + s.tensor + " is missing (" + info.model_type + " needs it)";
    if (it->second->shape != s.shape)
      return it->second->path + ": tensor " + s.tensor + " has shape " + shapeText(it->second->shape) + ", config.json implies " +
             shapeText(s.shape);
    used.insert(s.tensor);
  }
  for (const auto& e : entries)
    if (!used.count(e.name) && !arch->ignorable(e.name, info.config))
      return e.path + ": unexpected tensor " + e.name + " (" + info.model_type + " as configured has no such weight)";

  try {
    model = makeBlankModel(info.config);
  } catch (const std::exception& e) {
    return (fs::path(dir) / "config.json").string() + ": cannot build the model (" + e.what() + ")";
  }
  for (const auto& p : model->params().all())
    if (std::none_of(plan.begin(), plan.end(), [&](const WeightSource& s) { return s.param == p->name; }))
      return dir + ": " + info.model_type + " gives no source for parameter " + p->name;

  Mat stored;
  std::string storedName;
  for (size_t i = 0; i < plan.size(); ++i) {
    const WeightSource& s = plan[i];
    Param* param = model->params().find(s.param);
    if (!param) return dir + ": " + info.model_type + " fills a parameter the model lacks: " + s.param;
    if (isPlainCopy(s, *param, byName.at(s.tensor)->elements())) {
      // Read straight into the parameter: a staging copy of the largest tensor (GPT-2's 154 MB
      // embedding) would be the peak of the whole load.
      if (std::string why = readTensorFloats(*byName.at(s.tensor), param->value.data()); !why.empty()) {
        model.reset();
        return why;
      }
    } else if (storedName != s.tensor) {  // fused tensors feed several parameters in a row: read once
      const TensorEntry& e = *byName.at(s.tensor);
      const Eigen::Index rows = e.shape.size() >= 2 ? e.shape[0] : 1;
      stored.resize(rows, rows ? static_cast<Eigen::Index>(e.elements() / rows) : 0);
      if (std::string why = readTensorFloats(e, stored.data()); !why.empty()) {
        model.reset();
        return why;
      }
      storedName = s.tensor;
      s.convert(stored, param->value);
    } else {
      s.convert(stored, param->value);
    }
    if (progress && !progress(static_cast<double>(i + 1) / plan.size())) {
      model.reset();
      return dir + ": loading cancelled";
    }
  }
  return {};
}

}  // namespace attnlab::hf
