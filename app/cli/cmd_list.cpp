// list: every attention variant, positional encoding, task and preset, with its settings.
#include <charconv>
#include <iostream>

#include "attention/attention.h"
#include "command.h"
#include "data/task.h"
#include "format.h"
#include "io/config_json.h"
#include "kv/eviction_policy.h"
#include "model/gates.h"
#include "positional/positional.h"

namespace attnlab::cli {
namespace {

struct Member {
  std::string name;
  std::string summary;
  std::vector<SettingSpec> settings;
};

// A member's settings are only known by creating it.
template <class Base>
std::vector<Member> membersOf() {
  std::vector<Member> members;
  for (const auto& entry : Registry<Base>::instance().entries())
    members.push_back({entry.name, entry.summary, entry.make()->settingSpecs()});
  return members;
}

std::vector<Member> gates() {
  std::vector<Member> members;
  for (const GateInfo& gate : gateCatalogue()) members.push_back({gate.name, gate.summary, {}});
  return members;
}

std::vector<Member> presets() {
  std::vector<Member> members;
  for (const std::string& name : presetNames()) {
    ExperimentConfig config;
    const std::string why = loadPreset(name, config);
    members.push_back({name, why.empty() ? config.description : why, {}});
  }
  return members;
}

struct Family {
  const char* key;    // in --json
  const char* title;  // in text
  std::vector<Member> members;
};

std::vector<Family> families() {
  return {{"attention", "Attention variants", membersOf<AttentionVariant>()},
          {"positional", "Positional encodings", membersOf<PositionalEncoding>()},
          {"gates", "Gates (shared by every variant)", gates()},
          {"tasks", "Tasks", membersOf<Task>()},
          {"eviction", "KV-cache eviction policies (generate --policy NAME --budget N|R%)", membersOf<EvictionPolicy>()},
          {"presets", "Presets (train --preset NAME)", presets()}};
}

// The shortest text that reads back as `v`: 1, 0.25, 1e+09.
std::string numberText(double v) {
  char text[32];
  return std::string(text, std::to_chars(text, text + sizeof(text), v).ptr);
}

void printText(const std::vector<Family>& all) {
  for (const Family& family : all) {
    std::cout << family.title << "\n";
    for (const Member& m : family.members) {
      std::cout << "  " << m.name << std::string(m.name.size() < 20 ? 20 - m.name.size() : 1, ' ') << m.summary << "\n";
      for (const SettingSpec& s : m.settings)
        std::cout << "      " << s.key << " = " << numberText(s.defaultValue) << "  in [" << numberText(s.min) << ", "
                  << numberText(s.max) << "]" << (s.integer ? " whole" : "") << "  " << s.help << "\n";
    }
    std::cout << "\n";
  }
  std::cout << "Settings are changed with --set, e.g. model.attention_settings.<key>=V, "
               "model.positional_settings.<key>=V, task.settings.<key>=V; eviction settings with --policy-set <key>=V.\n";
}

void printJson(const std::vector<Family>& all) {
  Json root = Json::object();
  for (const Family& family : all) {
    Json members = Json::array();
    for (const Member& m : family.members) {
      Json settings = Json::array();
      for (const SettingSpec& s : m.settings)
        settings.push_back({{"key", s.key},
                            {"default", s.defaultValue},
                            {"min", s.min},
                            {"max", s.max},
                            {"integer", s.integer},
                            {"help", s.help}});
      members.push_back({{"name", m.name}, {"summary", m.summary}, {"settings", settings}});
    }
    root[family.key] = members;
  }
  std::cout << root.dump(2) << std::endl;
}

int runList(const Args& args) {
  const std::vector<Family> all = families();
  args.has("json") ? printJson(all) : printText(all);
  return 0;
}

}  // namespace

Command listCommand() {
  return {"list",
          "[--json]",
          "list attention variants, positional encodings, tasks and presets with their settings",
          {{"json", "", "print one JSON object: {attention, positional, gates, tasks, eviction, presets: [{name, summary, settings}]}"}},
          "",
          runList};
}

}  // namespace attnlab::cli
