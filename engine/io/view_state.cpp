#include "io/view_state.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "io/checkpoint.h"  // writeFileAtomic
#include "core/files.h"
#include "core/json_limits.h"
#include "io/json_read.h"

namespace attnlab {

namespace {

using Json = nlohmann::ordered_json;
constexpr const char* kFile = "view_state.json";
constexpr const char* kFormat = "attnlab-view-state-1";

}  // namespace

std::string viewStateToJson(const ViewState& s) {
  Json j;
  j["format"] = kFormat;
  j["view"] = s.view;
  j["probe"] = s.probe;
  j["selection"] = {{"layer", s.layer}, {"head", s.head}};
  j["colour_scale"] = s.logColours ? "log" : "linear";
  j["kv"] = {{"policy", s.policy}, {"budget", s.budget}};
  return j.dump(2) + "\n";
}

std::string viewStateFromJson(const std::string& text, ViewState& out) {
  if (std::string why = checkJsonDepth(text); !why.empty()) return why;
  const Json j = Json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("format") || j["format"] != kFormat)
    return std::string("not a view state (\"format\" must be \"") + kFormat + "\")";
  ViewState s;
  std::string scale = "linear";
  Json selection = Json::object(), kv = Json::object();
  for (const std::string& why : {readOptional(j, "view", s.view), readOptional(j, "probe", s.probe),
                                 readOptional(j, "selection", selection), readOptional(j, "colour_scale", scale),
                                 readOptional(j, "kv", kv)})
    if (!why.empty()) return why;
  if (!selection.is_object() || !kv.is_object()) return "\"selection\" and \"kv\" must be objects";
  for (const std::string& why : {readOptional(selection, "layer", s.layer), readOptional(selection, "head", s.head),
                                 readOptional(kv, "policy", s.policy), readOptional(kv, "budget", s.budget)})
    if (!why.empty()) return why;
  if (s.layer < 0 || s.head < 0) return "\"selection\" must name a layer and head from 0";
  if (scale != "log" && scale != "linear") return "\"colour_scale\" must be \"log\" or \"linear\"";
  s.logColours = scale == "log";
  out = std::move(s);
  return {};
}

std::string writeViewState(const std::string& folder, const ViewState& state) {
  return writeFileAtomic((std::filesystem::path(folder) / kFile).string(), viewStateToJson(state));
}

std::string readViewState(const std::string& folder, ViewState& out, bool& found) {
  const std::string path = (std::filesystem::path(folder) / kFile).string();
  std::error_code ec;
  found = std::filesystem::exists(path, ec);
  if (!found) return {};
  std::string text;
  if (std::string why = readWholeFile(path, text); !why.empty()) return why;
  if (std::string why = viewStateFromJson(text, out); !why.empty()) return path + ": " + why;
  return {};
}

}  // namespace attnlab
