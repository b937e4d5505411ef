// The optimiser and data-stream state of a checkpoint (io/training_state.h). The moments reuse the
// safetensors reader, which validates every name, shape and value before anything is changed.
#include "io/training_state.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "io/checkpoint.h"
#include "core/files.h"
#include "core/json_limits.h"

namespace attnlab {

namespace fs = std::filesystem;

namespace {

constexpr const char* kStateFile = "training_state.json";
constexpr const char* kMomentsFile = "optimizer.safetensors";
constexpr const char* kFormat = "attnlab-training-state";
constexpr int kVersion = 1;

// One tensor per moment, named after its parameter: "<name>.exp_avg" and "<name>.exp_avg_sq".
ParamStore momentStore(const ParamStore& params) {
  ParamStore moments;
  for (const auto& p : params.all()) {
    moments.add(p->name + ".exp_avg", p->shape, false);
    moments.add(p->name + ".exp_avg_sq", p->shape, false);
  }
  return moments;
}

}  // namespace

std::string writeTrainingState(const std::string& folder, const Trainer& trainer) {
  const AdamW& optimizer = trainer.optimizer();
  ParamStore moments = momentStore(trainer.model().params());
  auto& all = moments.all();
  for (size_t i = 0; i < optimizer.firstMoments().size(); ++i) {
    all[2 * i]->value = optimizer.firstMoments()[i];
    all[2 * i + 1]->value = optimizer.secondMoments()[i];
  }
  if (std::string why = writeSafetensors((fs::path(folder) / kMomentsFile).string(), moments); !why.empty()) return why;
  const nlohmann::ordered_json state = {{"format", kFormat},
                                        {"version", kVersion},
                                        {"step", trainer.stepsDone()},
                                        {"optimizer_steps", optimizer.steps()},
                                        {"data_stream", trainer.dataStream().state()}};
  return writeFileAtomic((fs::path(folder) / kStateFile).string(), state.dump(2) + "\n");
}

std::string readTrainingState(const std::string& folder, Trainer& trainer, std::string& notice) {
  const fs::path statePath = fs::path(folder) / kStateFile, momentsPath = fs::path(folder) / kMomentsFile;
  std::error_code ec;
  const bool hasState = fs::exists(statePath, ec), hasMoments = fs::exists(momentsPath, ec);
  if (!hasState && !hasMoments) {
    notice = "this checkpoint holds no optimiser state (saved by an older version): training on restarts the "
             "optimiser and draws different batches than an uninterrupted run would";
    return {};
  }
  if (!hasState) return statePath.string() + ": missing, though " + kMomentsFile + " is there";
  if (!hasMoments) return momentsPath.string() + ": missing, though " + kStateFile + " is there";

  const std::string where = statePath.string() + ": ";
  std::string text;
  if (std::string why = readWholeFile(statePath.string(), text); !why.empty()) return why;
  if (std::string why = checkJsonDepth(text); !why.empty()) return where + why;
  const nlohmann::json state = nlohmann::json::parse(text, nullptr, false);
  if (state.is_discarded() || !state.is_object()) return where + "not a JSON object";
  if (state.value("format", "") != kFormat) return where + "\"format\" must be \"" + kFormat + "\"";
  if (!state.contains("version") || state["version"] != kVersion)
    return where + "unsupported \"version\" (this version reads " + std::to_string(kVersion) + ")";
  for (const char* key : {"step", "optimizer_steps"})
    if (!state.contains(key) || !state[key].is_number_unsigned() || state[key].get<uint64_t>() > (1u << 31))
      return where + "\"" + key + "\" must be a non-negative whole number";
  if (!state.contains("data_stream") || !state["data_stream"].is_string())
    return where + "\"data_stream\" must be a string";
  const int step = state["step"].get<int>(), optimizerSteps = state["optimizer_steps"].get<int>();
  if (step != trainer.stepsDone())
    return where + "\"step\" is " + std::to_string(step) + " but history.csv ends at step " +
           std::to_string(trainer.stepsDone());

  ParamStore moments = momentStore(trainer.model().params());
  if (std::string why = readSafetensors(momentsPath.string(), moments); !why.empty()) return why;
  std::vector<Mat> m, v;
  for (size_t i = 0; i < moments.all().size(); i += 2) {
    m.push_back(std::move(moments.all()[i]->value));
    v.push_back(std::move(moments.all()[i + 1]->value));
  }
  return trainer.restoreTrainingState(optimizerSteps, std::move(m), std::move(v), state["data_stream"].get<std::string>())
             ? std::string()
             : where + "\"data_stream\" is not a generator state";
}

}  // namespace attnlab
