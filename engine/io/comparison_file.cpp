#include "io/comparison_file.h"

#include <nlohmann/json.hpp>

#include "io/checkpoint.h"
#include "io/config_json.h"
#include "core/files.h"
#include "core/json_limits.h"
#include "io/json_read.h"

namespace attnlab {

namespace {

using Json = nlohmann::ordered_json;
constexpr const char* kFormat = "attnlab-comparison-1";

}  // namespace

std::string comparisonToJson(const ComparisonDocument& d) {
  Json runs = Json::array();
  for (const ComparisonRun& run : d.runs) {
    Json entry;
    entry["config"] = Json::parse(configToJson(run.config));
    if (!run.checkpoint.empty()) entry["checkpoint"] = run.checkpoint;
    if (!run.model_folder.empty()) entry["model_folder"] = run.model_folder;
    runs.push_back(std::move(entry));
  }
  Json j;
  j["format"] = kFormat;
  j["view"] = d.view;
  j["columns"] = d.columns;
  j["schedule"] = d.oneAfterAnother ? "one_after_another" : "concurrent";
  j["probe"] = d.probe;
  j["selection"] = {{"layer", d.layer}, {"head", d.head}};
  j["metrics"] = {{"policy", d.policy}, {"budget", d.budget}};
  j["runs"] = std::move(runs);
  return j.dump(2) + "\n";
}

std::string comparisonFromJson(const std::string& text, ComparisonDocument& out) {
  if (std::string why = checkJsonDepth(text); !why.empty()) return "not a comparison file: " + why;
  const Json j = Json::parse(text, nullptr, false);
  if (j.is_discarded()) return "not a comparison file: the text is not JSON";
  if (!j.is_object() || !j.contains("format") || j["format"] != kFormat)
    return std::string("not a comparison file: \"format\" must be \"") + kFormat + "\"";
  ComparisonDocument d;
  std::string schedule = "concurrent";
  Json selection = Json::object(), metrics = Json::object();
  for (const std::string& why : {readOptional(j, "view", d.view), readOptional(j, "columns", d.columns),
                                 readOptional(j, "schedule", schedule), readOptional(j, "probe", d.probe),
                                 readOptional(j, "selection", selection), readOptional(j, "metrics", metrics)})
    if (!why.empty()) return why;
  if (!selection.is_object() || !metrics.is_object()) return "\"selection\" and \"metrics\" must be objects";
  for (const std::string& why : {readOptional(selection, "layer", d.layer), readOptional(selection, "head", d.head),
                                 readOptional(metrics, "policy", d.policy), readOptional(metrics, "budget", d.budget)})
    if (!why.empty()) return why;
  if (schedule != "concurrent" && schedule != "one_after_another")
    return "\"schedule\" must be \"concurrent\" or \"one_after_another\", got \"" + schedule + "\"";
  d.oneAfterAnother = schedule == "one_after_another";
  if (d.columns < 1 || d.columns > ComparisonDocument::kMaxRuns) return "\"columns\" must be 1 to 4";
  if (d.layer < 0 || d.head < 0) return "\"selection\" must name a layer and head from 0";

  const auto runs = j.find("runs");
  if (runs == j.end() || !runs->is_array()) return "\"runs\" must be a list of runs";
  if (runs->size() < ComparisonDocument::kMinRuns || runs->size() > ComparisonDocument::kMaxRuns)
    return "a comparison holds 2 to 4 runs, this file has " + std::to_string(runs->size());
  for (size_t i = 0; i < runs->size(); ++i) {
    const Json& entry = (*runs)[i];
    const std::string which = "run " + std::to_string(i + 1);
    if (!entry.is_object() || !entry.contains("config")) return which + ": needs a \"config\"";
    ComparisonRun run;
    if (std::string why = configFromJson(entry["config"].dump(), run.config); !why.empty()) return which + ": " + why;
    if (std::string why = validate(run.config); !why.empty()) return which + ": " + why;
    if (std::string why = readOptional(entry, "checkpoint", run.checkpoint); !why.empty()) return which + ": " + why;
    if (std::string why = readOptional(entry, "model_folder", run.model_folder); !why.empty()) return which + ": " + why;
    if (!run.checkpoint.empty() && !run.model_folder.empty())
      return which + ": names both a \"checkpoint\" and a \"model_folder\" (a run is one or the other)";
    d.runs.push_back(std::move(run));
  }
  out = std::move(d);
  return {};
}

std::string writeComparisonFile(const std::string& path, const ComparisonDocument& document) {
  return writeFileAtomic(path, comparisonToJson(document));
}

std::string readComparisonFile(const std::string& path, ComparisonDocument& out) {
  std::string bytes;
  if (std::string why = readWholeFile(path, bytes); !why.empty()) return why;
  if (std::string why = comparisonFromJson(bytes, out); !why.empty()) return path + ": " + why;
  return {};
}

}  // namespace attnlab
