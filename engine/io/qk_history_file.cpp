#include "io/qk_history_file.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "io/checkpoint.h"
#include "core/files.h"
#include "core/json_limits.h"

namespace attnlab {

namespace fs = std::filesystem;

namespace {

constexpr const char* kIndexFile = "qk_history.json";
constexpr const char* kTensorFile = "qk_history.safetensors";
constexpr const char* kFormat = "attnlab-qk-history";
constexpr int kVersion = 1;

std::string stepPrefix(int step) { return "step" + std::to_string(step) + "."; }

// Every step's projections in one store, shaped as the model's (values empty when reading).
ParamStore historyStore(const std::vector<int>& steps, const ParamStore& shapes) {
  ParamStore store;
  store.setAllocation(Allocation::ValuesOnly);
  for (const int step : steps)
    for (const auto& p : shapes.all()) store.add(stepPrefix(step) + p->name, p->shape, false);
  return store;
}

}  // namespace

std::string writeQkHistory(const std::string& folder, const Trainer& trainer) {
  const QkWeightHistory& history = trainer.qkHistory();
  if (history.frames().empty()) return {};
  std::vector<int> steps;
  for (const QkWeightFrame& f : history.frames()) steps.push_back(f.step);
  ParamStore store = historyStore(steps, *history.frames().front().weights);
  size_t i = 0;
  for (const QkWeightFrame& f : history.frames())
    for (const auto& p : f.weights->all()) store.all()[i++]->value = p->value;
  if (std::string why = writeSafetensors((fs::path(folder) / kTensorFile).string(), store); !why.empty()) return why;
  const nlohmann::ordered_json index = {{"format", kFormat}, {"version", kVersion}, {"stride", history.stride()}, {"steps", steps}};
  return writeFileAtomic((fs::path(folder) / kIndexFile).string(), index.dump() + "\n");
}

std::string readQkHistory(const std::string& folder, Trainer& trainer) {
  const fs::path indexPath = fs::path(folder) / kIndexFile, tensorPath = fs::path(folder) / kTensorFile;
  std::error_code ec;
  const bool hasIndex = fs::exists(indexPath, ec), hasTensors = fs::exists(tensorPath, ec);
  if (!hasIndex && !hasTensors) return {};
  if (!hasIndex) return indexPath.string() + ": missing, though " + kTensorFile + " is there";
  if (!hasTensors) return tensorPath.string() + ": missing, though " + kIndexFile + " is there";

  const std::string where = indexPath.string() + ": ";
  std::string text;
  if (std::string why = readWholeFile(indexPath.string(), text); !why.empty()) return why;
  if (std::string why = checkJsonDepth(text); !why.empty()) return where + why;
  const nlohmann::json index = nlohmann::json::parse(text, nullptr, false);
  if (index.is_discarded() || !index.is_object()) return where + "not a JSON object";
  if (index.value("format", "") != kFormat) return where + "\"format\" must be \"" + kFormat + "\"";
  if (!index.contains("version") || index["version"] != kVersion)
    return where + "unsupported \"version\" (this version reads " + std::to_string(kVersion) + ")";
  if (!index.contains("stride") || !index["stride"].is_number_unsigned() || index["stride"].get<uint64_t>() < 1 ||
      index["stride"].get<uint64_t>() > (1u << 30))
    return where + "\"stride\" must be a whole number from 1";
  const int stride = index["stride"].get<int>();
  if (!index.contains("steps") || !index["steps"].is_array() || index["steps"].empty() ||
      index["steps"].size() > size_t(QkWeightHistory::kMaxFrames))
    return where + "\"steps\" must list 1 to " + std::to_string(QkWeightHistory::kMaxFrames) + " steps";
  std::vector<int> steps;
  for (const auto& s : index["steps"]) {
    if (!s.is_number_unsigned() || s.get<uint64_t>() > uint64_t(trainer.stepsDone()))
      return where + "each step must be a whole number up to the run's " + std::to_string(trainer.stepsDone()) + " steps";
    const int step = s.get<int>();
    if (step % stride != 0) return where + "step " + std::to_string(step) + " is not a multiple of the stride " + std::to_string(stride);
    if (!steps.empty() && step <= steps.back()) return where + "steps must increase";
    steps.push_back(step);
  }

  const ParamStore shapes = QkWeightHistory::qkTensors(trainer.model().params(), false);
  ParamStore store = historyStore(steps, shapes);
  if (std::string why = readSafetensors(tensorPath.string(), store); !why.empty()) return why;
  std::vector<QkWeightFrame> frames;
  size_t i = 0;
  for (const int step : steps) {
    auto weights = std::make_shared<ParamStore>(QkWeightHistory::qkTensors(shapes, false));
    for (auto& p : weights->all()) p->value = std::move(store.all()[i++]->value);
    frames.push_back({step, std::move(weights)});
  }
  trainer.qkHistory().restore(std::move(frames), stride);
  return {};
}

}  // namespace attnlab
