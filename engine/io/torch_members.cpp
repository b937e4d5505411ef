#include "io/torch_members.h"

#include <nlohmann/json.hpp>
#include <tuple>

#include "io/config_json.h"

namespace attnlab {

namespace {

using Json = nlohmann::json;

bool lists(const Json& list, const std::string& name) {
  if (list.is_object()) return list.contains(name);
  for (const Json& entry : list)
    if (entry == name) return true;
  return false;
}

std::string joined(const Json& list) {
  std::string out;
  if (list.is_object())
    for (const auto& [name, _] : list.items()) out += (out.empty() ? "" : ", ") + name;
  else
    for (const Json& name : list) out += (out.empty() ? "" : ", ") + name.get<std::string>();
  return out;
}

// The one line refusing member `name` of `kind`: members.json's reason, or what the package builds instead.
std::string refused(const Json& members, const std::string& kind, const std::string& name, const std::string& what,
                    const std::string& instead) {
  const std::string head = "the PyTorch export cannot express " + what + " '" + name + "'";
  const Json& reasons = members.at("refused");
  if (const auto reason = reasons.find(kind + ":" + name); reason != reasons.end()) return head + ": " + reason->get<std::string>();
  return head + " (attnlab_torch builds " + instead + ")";
}

// "" when `known` (a list, or an object keyed by name) holds `name`, else its refusal.
std::string refusal(const Json& members, const std::string& kind, const std::string& name, const std::string& what,
                    const Json& known) {
  return lists(known, name) ? std::string() : refused(members, kind, name, what, joined(known));
}

std::string checkConfig(const ExperimentConfig& config, const Json& members) {
  const Json saved = Json::parse(configToJson(config)), defaults = Json::parse(configToJson(ExperimentConfig{}));
  for (const auto& [key, _] : saved.at("model").items())
    if (std::string why = refusal(members, "model_key", key, "model key", members.at("model_keys")); !why.empty()) return why;
  for (const auto& [key, value] : saved.at("train").items())  // a training key it does not read is harmless at its default
    if (!defaults.at("train").contains(key) || defaults["train"][key] != value)
      if (std::string why = refusal(members, "train_key", key, "training key", members.at("train_keys")); !why.empty())
        return why + " at a value other than its default";
  const ModelConfig& m = config.model;
  const Json& attention = members.at("attention");
  for (const std::string& variant : m.attention)
    if (std::string why = refusal(members, "attention", variant, "attention variant", attention); !why.empty()) return why;
  for (const auto& [key, _] : m.attention_settings) {  // a setting some variant here reads (the engine checks which)
    bool read = false;
    for (const auto& [variant, settings] : attention.items()) read = read || lists(settings, key);
    if (!read)
      return refused(members, "attention_setting", m.attention.front() + "." + key, "attention setting",
                     m.attention.front() + "'s " + joined(attention.at(m.attention.front())));
  }
  const Json& positional = members.at("positional");
  if (std::string why = refusal(members, "positional", m.positional, "positional encoding", positional); !why.empty()) return why;
  for (const auto& [key, _] : m.positional_settings)
    if (!lists(positional.at(m.positional), key))
      return refused(members, "positional_setting", m.positional + "." + key, "positional setting",
                     m.positional + "'s " + joined(positional.at(m.positional)));
  for (const auto& [kind, value, what] : {std::tuple{"projection_sharing", m.projection_sharing, "projection sharing"},
                                          {"output_gate", m.output_gate, "output gate"},
                                          {"score_precision", m.score_precision, "score precision"},
                                          {"norm", m.norm, "model.norm"},
                                          {"mlp", m.mlp, "model.mlp"}})
    if (std::string why = refusal(members, kind, value, what, members.at(kind)); !why.empty()) return why;
  return {};
}

}  // namespace

std::string torchExportRefusal(const ExperimentConfig& config, const std::string& membersJson) {
  try {
    return checkConfig(config, Json::parse(membersJson));
  } catch (const std::exception& e) {
    return std::string("the PyTorch export's members.json is not readable (") + e.what() + ")";
  }
}

}  // namespace attnlab
