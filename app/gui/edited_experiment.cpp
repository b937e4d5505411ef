#include "edited_experiment.h"

#include <string_view>
#include <vector>

#include "io/config_json.h"

namespace attnlab {

namespace {
constexpr std::string_view kEdited = " (edited)";
constexpr size_t kListed = 4;  // a one-line description, not a diff

bool endsWith(const std::string& s, std::string_view tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::string valueOf(const ExperimentConfig& c, const std::string& key) {
  std::string text;
  return configFieldText(c, key, text).empty() ? text : std::string();
}
}  // namespace

std::string describeChanges(const ExperimentConfig& from, const ExperimentConfig& to) {
  std::vector<std::string> changes;
  for (const std::string& key : configFieldKeys()) {
    if (key == "name" || key == "description" || key == "model.vocab") continue;  // vocab follows the task
    const std::string a = valueOf(from, key), b = valueOf(to, key);
    if (a != b) changes.push_back(key + " " + (a.empty() ? "\u2013" : a) + " \u2192 " + (b.empty() ? "\u2013" : b));
  }
  // The settings maps are not single values: named as a whole.
  if (from.model.attention_settings != to.model.attention_settings) changes.push_back("attention settings");
  if (from.model.positional_settings != to.model.positional_settings) changes.push_back("positional settings");
  if (from.task.settings != to.task.settings) changes.push_back("task settings");
  std::string out;
  for (size_t i = 0; i < changes.size() && i < kListed; ++i) out += (i ? ", " : "") + changes[i];
  if (changes.size() > kListed) out += " and " + std::to_string(changes.size() - kListed) + " more";
  return out;
}

ExperimentConfig markedAsEdited(ExperimentConfig edited, const ExperimentConfig& from) {
  const std::string changes = describeChanges(from, edited);
  if (changes.empty()) return edited;
  if (edited.name == from.name && !endsWith(edited.name, kEdited)) edited.name += kEdited;
  edited.description = "Edited from \u201c" + from.name + "\u201d: " + changes;
  return edited;
}

}  // namespace attnlab
