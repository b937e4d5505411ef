#include "data/task_support.h"

#include <algorithm>
#include <optional>
#include <stdexcept>

namespace attnlab {

std::string checkTaskSettings(const Settings& settings, const std::vector<SettingSpec>& specs,
                              const std::string& task) {
  for (const auto& [key, value] : settings) {
    const bool declared = std::any_of(specs.begin(), specs.end(), [&name = key](const SettingSpec& s) { return s.key == name; });
    if (declared) continue;
    std::string known;
    for (const auto& s : specs) known += (known.empty() ? "" : ", ") + s.key;
    return "task " + task + ": unknown setting '" + key + "'; " +
           (known.empty() ? "it has no settings" : "its settings are " + known);
  }
  return validateSettings(settings, specs, "task " + task);
}

void checkBatchShape(const std::string& task, int batch, int seqLen, int minSeqLen) {
  if (batch < 1)
    throw std::invalid_argument("task " + task + ": batch size must be at least 1, got " + std::to_string(batch));
  if (seqLen < minSeqLen)
    throw std::invalid_argument("task " + task + ": sequences need at least " + std::to_string(minSeqLen) +
                                " tokens, got " + std::to_string(seqLen));
}

Batch emptyBatch(int batch, int seqLen) {
  Batch out;
  out.B = batch;
  out.T = seqLen;
  out.inputs.assign(static_cast<size_t>(batch) * seqLen, 0);
  out.targets.assign(static_cast<size_t>(batch) * seqLen, -1);
  return out;
}

std::vector<std::string> letterSymbols(int count) {
  static const std::string kLetters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  assert(count <= static_cast<int>(kLetters.size()));
  std::vector<std::string> out;
  for (int i = 0; i < count; ++i) out.emplace_back(1, kLetters[i]);
  return out;
}

std::vector<std::string> numberSymbols(int count) {
  std::vector<std::string> out;
  for (int i = 0; i < count; ++i) out.push_back(std::to_string(i));
  return out;
}

std::string GeneratedTask::configure(const TaskConfig& config) {
  const std::string error = checkTaskSettings(config.settings, settingSpecs(), name_);
  return error.empty() ? setUp(config.settings) : error;
}

Batch GeneratedTask::sample(int batch, int seqLen, Split split, Rng& rng) const {
  checkBatchShape(name_, batch, seqLen, minSequenceLength());
  Batch out = emptyBatch(batch, seqLen);
  constexpr uint64_t kValidationSalt = 0x9E3779B97F4A7C15ull;
  std::optional<Rng> validation;
  if (split == Split::Validation) validation.emplace(rng.next() ^ kValidationSalt);
  Rng& source = validation ? *validation : rng;
  for (int row = 0; row < batch; ++row) {
    SequenceWriter writer(out, row);
    write(writer, split, source);
    assert(writer.remaining() == 0);
  }
  return out;
}

}  // namespace attnlab
