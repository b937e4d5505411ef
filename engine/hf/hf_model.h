#pragma once
// Opening a Hugging Face model folder (config.json + model.safetensors, or shards listed by
// model.safetensors.index.json) as the engine's Model, so every view, analysis and KV policy works
// on it. Architectures: hf/architecture.h. Nothing is allocated for weights before the memory the
// model needs (estimateInference at kOpeningTokens, as for a lab checkpoint) has been compared with
// the machine's free memory.
#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>

#include "config/model_config.h"
#include "model/model.h"

namespace attnlab::hf {

struct HfModelInfo {
  std::string dir;
  std::string model_type;
  ModelConfig config;
  uint64_t parameters = 0;  // engine parameters (float32 values)
  uint64_t file_bytes = 0;  // weight files on disk
  std::string dtype;        // the stored weights' dtype (the largest share), e.g. "BF16"
  std::set<std::string> tensor_names;  // as stored (GPT-2's name layout is read from them)
};

// True when `dir` has a config.json naming a model_type (a lab checkpoint's config.json does not).
bool isHfFolder(const std::string& dir);
// The model_types that open, comma-separated.
std::string supportedArchitectures();

// Reads config.json into info.model_type and info.config (no weights). Returns "" or
// "<dir>/config.json: <what is wrong>", naming the model_type and the supported list when refused.
std::string readHfConfig(const std::string& dir, HfModelInfo& info);

// readHfConfig, and the weight files' headers (tensor names, dtype, bytes on disk): all that
// describes the folder's model without loading a weight. Returns "" or a one-line reason.
std::string readHfInfo(const std::string& dir, HfModelInfo& info);

// Parameters of a model built from `config`.
uint64_t parameterCount(const ModelConfig& config);
// Opens `dir`. `progress(fraction)` is called as tensors load and cancels the load by returning
// false. Returns "" or a one-line reason naming the file and what is wrong.
std::string openHfModel(const std::string& dir, std::unique_ptr<Model>& model, HfModelInfo& info,
                        const std::function<bool(double)>& progress = {});

}  // namespace attnlab::hf
