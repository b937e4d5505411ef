#include "hf/hf_export.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>

#include "hf/architecture.h"
#include "hf/pretrained_copy.h"
#include "core/files.h"
#include "core/files.h"

namespace attnlab::hf {

namespace fs = std::filesystem;

namespace {

constexpr int64_t kIndexBase = 4096;  // indices travel as two floats below 2^12 and 2^24: both exact

// The inverse of one conversion: every conversion only moves values, so running it on the
// stored elements' indices says which stored element each value element came from.
void scatterBack(const WeightSource& s, const Param& param, Mat& stored) {
  Mat low(stored.rows(), stored.cols()), high(stored.rows(), stored.cols());
  for (Eigen::Index i = 0; i < stored.size(); ++i) {
    low.data()[i] = static_cast<float>(i % kIndexBase);
    high.data()[i] = static_cast<float>(i / kIndexBase);
  }
  Mat fromLow(param.value.rows(), param.value.cols()), fromHigh(param.value.rows(), param.value.cols());
  s.convert(low, fromLow);
  s.convert(high, fromHigh);
  for (Eigen::Index e = 0; e < param.value.size(); ++e)
    stored.data()[static_cast<int64_t>(fromHigh.data()[e]) * kIndexBase + static_cast<int64_t>(fromLow.data()[e])] = param.value.data()[e];
}

}  // namespace

std::string exportHfModel(const Model& model, const HfModelInfo& info, const std::string& outDir) {
  auto arch = ArchitectureRegistry::instance().create(info.model_type);
  if (!arch) return "model_type \"" + info.model_type + "\" cannot be exported";
  std::vector<WeightSource> plan;
  if (std::string why = arch->plan(model.config(), info.tensor_names, plan); !why.empty()) return why;

  std::vector<std::string> order;  // tensors in the plan's order, each with its sources
  std::map<std::string, std::vector<const WeightSource*>> sources;
  for (const auto& s : plan) {
    if (!sources.count(s.tensor)) order.push_back(s.tensor);
    sources[s.tensor].push_back(&s);
  }
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  header["__metadata__"] = {{"format", "pt"}};
  std::vector<Mat> tensors;
  uint64_t offset = 0;
  for (const auto& name : order) {
    const std::vector<int64_t>& shape = sources[name][0]->shape;
    const Eigen::Index rows = shape.size() >= 2 ? shape[0] : 1;
    Eigen::Index count = 1;
    for (int64_t d : shape) count *= d;
    Mat stored = Mat::Constant(rows, rows ? count / rows : 0, std::numeric_limits<float>::quiet_NaN());
    for (const WeightSource* s : sources[name]) {
      const Param* param = model.params().find(s->param);
      if (!param) return "the model has no parameter " + s->param + " for " + name;
      scatterBack(*s, *param, stored);
    }
    for (Eigen::Index i = 0; i < stored.size(); ++i)
      if (std::isnan(stored.data()[i])) return "tensor " + name + " is not fully determined by the model (element " + std::to_string(i) + ")";
    const uint64_t bytes = static_cast<uint64_t>(stored.size()) * sizeof(float);
    header[name] = {{"dtype", "F32"}, {"shape", shape}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
    tensors.push_back(std::move(stored));
  }

  std::error_code ec;
  fs::create_directories(outDir, ec);
  if (ec) return outDir + ": cannot create (" + ec.message() + ")";
  if (std::string why = copyDescriptionFiles(info.dir, outDir); !why.empty()) return why;
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string bytes;
  for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<char>((uint64_t(text.size()) >> (8 * i)) & 0xff));
  bytes += text;
  for (const Mat& t : tensors) bytes.append(reinterpret_cast<const char*>(t.data()), t.size() * sizeof(float));
  return writeFileAtomic((fs::path(outDir) / "model.safetensors").string(), bytes);
}

}  // namespace attnlab::hf
