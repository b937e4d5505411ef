#include "io/config_json.h"
#include "core/json_limits.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <climits>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string_view>
#include <utility>
#include <variant>

namespace attnlab {

// Generated at build time from resources/presets/*.json (engine/embed_presets.cmake).
const std::vector<std::pair<std::string_view, std::string_view>>& embeddedPresets();

namespace {

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;  // keeps the struct's field order when writing

constexpr const char* kFormat = "attnlab-experiment-1";

// A reference to one config member. One table of these drives writing, reading and overrides,
// so the three can never disagree about a key's name or type.
using FieldRef = std::variant<int*, uint64_t*, double*, bool*, std::string*, std::vector<std::string>*, Settings*>;
struct Field {
  const char* key;
  FieldRef ref;
};
struct Section {
  const char* key;
  std::vector<Field> fields;
};

std::vector<Field> topFieldsOf(ExperimentConfig& c) { return {{"name", &c.name}, {"description", &c.description}}; }

std::vector<Section> sectionsOf(ExperimentConfig& c) {
  ModelConfig& m = c.model;
  TaskConfig& t = c.task;
  TrainConfig& r = c.train;
  return {
      {"model",
       {{"vocab", &m.vocab},
        {"d_model", &m.d_model},
        {"n_layers", &m.n_layers},
        {"n_heads", &m.n_heads},
        {"n_kv_heads", &m.n_kv_heads},
        {"d_ff", &m.d_ff},
        {"context", &m.context},
        {"attention_only", &m.attention_only},
        {"tied_embeddings", &m.tied_embeddings},
        {"attention", &m.attention},
        {"attention_settings", &m.attention_settings},
        {"positional", &m.positional},
        {"positional_settings", &m.positional_settings},
        {"projection_sharing", &m.projection_sharing},
        {"kv_latent_dim", &m.kv_latent_dim},
        {"kv_share_group", &m.kv_share_group},
        {"output_gate", &m.output_gate},
        {"value_gate", &m.value_gate},
        {"retention_gate", &m.retention_gate},
        {"retention_sparsity", &m.retention_sparsity},
        {"score_precision", &m.score_precision},
        {"norm", &m.norm},
        {"norm_eps", &m.norm_eps},
        {"mlp", &m.mlp},
        {"mlp_bias", &m.mlp_bias},
        {"qkv_bias", &m.qkv_bias},
        {"out_bias", &m.out_bias},
        {"parallel_residual", &m.parallel_residual}}},
      {"task", {{"name", &t.name}, {"settings", &t.settings}, {"text_path", &t.text_path}, {"tokenizer", &t.tokenizer}, {"seq_len", &t.seq_len}}},
      {"train",
       {{"steps", &r.steps},
        {"batch", &r.batch},
        {"lr", &r.lr},
        {"min_lr_ratio", &r.min_lr_ratio},
        {"warmup", &r.warmup},
        {"weight_decay", &r.weight_decay},
        {"beta1", &r.beta1},
        {"beta2", &r.beta2},
        {"eps", &r.eps},
        {"grad_clip", &r.grad_clip},
        {"seed", &r.seed},
        {"threads", &r.threads},
        {"eval_every", &r.eval_every},
        {"eval_batches", &r.eval_batches},
        {"qk_lr_ratio", &r.qk_lr_ratio},
        {"ov_lr_ratio", &r.ov_lr_ratio},
        {"lr_ratio_layers", &r.lr_ratio_layers},
        {"lr_ratio_from", &r.lr_ratio_from},
        {"lr_ratio_until", &r.lr_ratio_until},
        {"qk_guard", &r.qk_guard}}},
  };
}

// Works for fields and sections alike: both have a `key`.
template <class Item>
std::string keyList(const std::vector<Item>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + std::string(item.key);
  return out;
}

template <class Item>
Item* findByKey(std::vector<Item>& items, std::string_view key) {
  for (auto& item : items)
    if (key == item.key) return &item;
  return nullptr;
}

// A JSON value as it appears in a message, shortened so the message stays one line. Text from a
// flag or a tour may not be UTF-8: its bad bytes are shown as U+FFFD instead of throwing.
std::string shown(const Json& j) {
  std::string s = j.dump(-1, ' ', false, Json::error_handler_t::replace);
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

std::string quoteText(std::string_view s) { return shown(Json(std::string(s))); }

// ---- JSON -> config --------------------------------------------------------------------------

bool integralDouble(const Json& j, double lo, double hi, double& out) {
  if (!j.is_number_float()) return false;
  const double d = j.get<double>();
  if (d != std::floor(d) || d < lo || d > hi) return false;
  out = d;
  return true;
}

struct JsonReader {
  const Json& j;
  const std::string& path;

  std::string operator()(int* v) const {
    double d = 0;
    if (j.is_number_unsigned()) {
      if (j.get<uint64_t>() > static_cast<uint64_t>(INT_MAX)) return path + " = " + shown(j) + " is out of range";
      *v = static_cast<int>(j.get<uint64_t>());
    } else if (j.is_number_integer()) {
      const int64_t i = j.get<int64_t>();
      if (i < INT_MIN || i > INT_MAX) return path + " = " + shown(j) + " is out of range";
      *v = static_cast<int>(i);
    } else if (integralDouble(j, INT_MIN, INT_MAX, d)) {  // 2e3 is a fine way to write 2000
      *v = static_cast<int>(d);
    } else {
      return path + " must be an integer, got " + shown(j);
    }
    return {};
  }
  std::string operator()(uint64_t* v) const {
    double d = 0;
    if (j.is_number_unsigned()) *v = j.get<uint64_t>();
    else if (integralDouble(j, 0, 18446744073709549568.0, d)) *v = static_cast<uint64_t>(d);
    else return path + " must be a non-negative integer, got " + shown(j);
    return {};
  }
  std::string operator()(double* v) const {
    if (!j.is_number()) return path + " must be a number, got " + shown(j);
    *v = j.get<double>();
    return {};
  }
  std::string operator()(bool* v) const {
    if (!j.is_boolean()) return path + " must be true or false, got " + shown(j);
    *v = j.get<bool>();
    return {};
  }
  std::string operator()(std::string* v) const {
    if (!j.is_string()) return path + " must be a string, got " + shown(j);
    *v = j.get<std::string>();
    return {};
  }
  std::string operator()(std::vector<std::string>* v) const {
    if (j.is_string()) {
      *v = {j.get<std::string>()};
      return {};
    }
    if (!j.is_array()) return path + " must be a string or a list of strings, got " + shown(j);
    std::vector<std::string> names;
    for (size_t i = 0; i < j.size(); ++i) {
      if (!j[i].is_string())
        return path + "[" + std::to_string(i) + "] must be a string, got " + shown(j[i]);
      names.push_back(j[i].get<std::string>());
    }
    *v = std::move(names);
    return {};
  }
  std::string operator()(Settings* v) const {
    if (!j.is_object()) return path + " must be an object of numbers, got " + shown(j);
    Settings settings;
    for (const auto& [key, value] : j.items()) {
      if (!value.is_number()) return path + "." + key + " must be a number, got " + shown(value);
      settings[key] = value.get<double>();
    }
    *v = std::move(settings);
    return {};
  }
};

std::string readFields(const Json& object, std::vector<Field>& fields, const std::string& section) {
  if (!object.is_object()) return section + " must be an object, got " + shown(object);
  for (const auto& [key, value] : object.items()) {
    Field* field = findByKey(fields, key);
    if (!field) return "unknown key " + section + "." + key + " (" + section + " keys: " + keyList(fields) + ")";
    const std::string path = section + "." + key;
    if (std::string err = std::visit(JsonReader{value, path}, field->ref); !err.empty()) return err;
  }
  return {};
}

// ---- config -> JSON --------------------------------------------------------------------------

OrderedJson toJsonValue(const FieldRef& ref) {
  return std::visit(
      [](auto* v) -> OrderedJson {
        if constexpr (std::is_same_v<decltype(v), Settings*>) {
          OrderedJson object = OrderedJson::object();
          for (const auto& [key, value] : *v) object[key] = value;
          return object;
        } else {
          return OrderedJson(*v);
        }
      },
      ref);
}

// ---- "key=value" overrides -------------------------------------------------------------------

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

template <class T>
bool parseWhole(std::string_view s, T& out) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

bool parseFiniteDouble(std::string_view s, double& out) { return parseWhole(s, out) && std::isfinite(out); }

struct TextReader {
  std::string_view text;
  const std::string& path;

  std::string mustBe(const char* what) const { return path + " must be " + what + ", got " + quoteText(text); }

  std::string operator()(int* v) const { return parseWhole(text, *v) ? "" : mustBe("an integer"); }
  std::string operator()(uint64_t* v) const { return parseWhole(text, *v) ? "" : mustBe("a non-negative integer"); }
  std::string operator()(double* v) const { return parseFiniteDouble(text, *v) ? "" : mustBe("a finite number"); }
  std::string operator()(bool* v) const {
    if (text == "true" || text == "1") *v = true;
    else if (text == "false" || text == "0") *v = false;
    else return mustBe("true, false, 1 or 0");
    return {};
  }
  std::string operator()(std::string* v) const {
    *v = std::string(text);
    return {};
  }
  std::string operator()(std::vector<std::string>* v) const {
    std::vector<std::string> names;
    std::string_view rest = text;
    while (true) {
      const size_t comma = rest.find(',');
      const std::string_view name = trim(rest.substr(0, comma));
      if (name.empty()) return mustBe("a comma-separated list of names");
      names.emplace_back(name);
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
    *v = std::move(names);
    return {};
  }
  std::string operator()(Settings*) const { return path + " needs a setting name: " + path + ".<name>=<number>"; }
};

std::vector<std::string_view> splitKey(std::string_view key) {
  std::vector<std::string_view> parts;
  while (true) {
    const size_t dot = key.find('.');
    parts.push_back(key.substr(0, dot));
    if (dot == std::string_view::npos) return parts;
    key.remove_prefix(dot + 1);
  }
}

std::string applyTo(ExperimentConfig& config, std::string_view key, std::string_view value) {
  const std::vector<std::string_view> parts = splitKey(key);
  if (std::any_of(parts.begin(), parts.end(), [](std::string_view p) { return p.empty(); }))
    return "malformed key " + quoteText(key) + " (expected section.key, e.g. model.d_model)";

  std::vector<Field> top = topFieldsOf(config);
  std::vector<Section> sections = sectionsOf(config);
  if (parts.size() == 1) {
    Field* field = findByKey(top, parts[0]);
    if (!field)
      return "unknown key " + std::string(parts[0]) + " (top-level keys: " + keyList(top) + "; sections: " +
             keyList(sections) + ")";
    return std::visit(TextReader{value, std::string(parts[0])}, field->ref);
  }
  Section* section = findByKey(sections, parts[0]);
  if (!section)
    return "unknown section " + std::string(parts[0]) + " (sections: " + keyList(sections) + "; top-level keys: " +
           keyList(top) + ")";
  const std::string sectionName = section->key;
  Field* field = findByKey(section->fields, parts[1]);
  if (!field)
    return "unknown key " + sectionName + "." + std::string(parts[1]) + " (" + sectionName +
           " keys: " + keyList(section->fields) + ")";
  const std::string path = sectionName + "." + field->key;
  if (Settings** settings = std::get_if<Settings*>(&field->ref); settings && parts.size() == 3) {
    double number = 0;
    if (!parseFiniteDouble(value, number))
      return path + "." + std::string(parts[2]) + " must be a finite number, got " + quoteText(value);
    (**settings)[std::string(parts[2])] = number;
    return {};
  }
  if (parts.size() > 2) return path + " has no sub-key " + quoteText(key.substr(path.size() + 1));
  return std::visit(TextReader{value, path}, field->ref);
}

// One field's value in the form --set reads back: integers and booleans plainly, reals in their
// shortest exact form, lists comma-separated.
struct TextWriter {
  std::string operator()(const int* v) const { return std::to_string(*v); }
  std::string operator()(const uint64_t* v) const { return std::to_string(*v); }
  std::string operator()(const double* v) const {
    char buffer[64];
    const auto end = std::to_chars(buffer, buffer + sizeof buffer, *v).ptr;
    return std::string(buffer, end);
  }
  std::string operator()(const bool* v) const { return *v ? "true" : "false"; }
  std::string operator()(const std::string* v) const { return *v; }
  std::string operator()(const std::vector<std::string>* v) const {
    std::string text;
    for (const std::string& name : *v) text += (text.empty() ? "" : ",") + name;
    return text;
  }
  std::string operator()(const Settings*) const { return {}; }
};

}  // namespace

std::vector<std::string> configFieldKeys() {
  ExperimentConfig c;
  std::vector<std::string> keys;
  for (const Field& f : topFieldsOf(c))
    if (!std::holds_alternative<Settings*>(f.ref)) keys.emplace_back(f.key);
  for (const Section& section : sectionsOf(c))
    for (const Field& f : section.fields)
      if (!std::holds_alternative<Settings*>(f.ref)) keys.push_back(std::string(section.key) + "." + f.key);
  return keys;
}

std::string configFieldText(const ExperimentConfig& config, const std::string& key, std::string& text) {
  ExperimentConfig copy = config;  // the field table holds mutable references
  const std::vector<std::string_view> parts = splitKey(key);
  std::vector<Field> top = topFieldsOf(copy);
  std::vector<Section> sections = sectionsOf(copy);
  Field* field = nullptr;
  if (parts.size() == 1) field = findByKey(top, parts[0]);
  else if (Section* section = parts.size() == 2 ? findByKey(sections, parts[0]) : nullptr) field = findByKey(section->fields, parts[1]);
  if (!field || std::holds_alternative<Settings*>(field->ref)) return "no single value is named " + quoteText(key);
  text = std::visit([](auto* v) { return TextWriter{}(v); }, field->ref);
  return {};
}

std::string configToJson(const ExperimentConfig& config) {
  ExperimentConfig copy = config;  // the field table holds mutable references
  OrderedJson root = OrderedJson::object();
  root["format"] = kFormat;
  for (const Field& field : topFieldsOf(copy)) root[field.key] = toJsonValue(field.ref);
  for (const Section& section : sectionsOf(copy)) {
    OrderedJson object = OrderedJson::object();
    for (const Field& field : section.fields) object[field.key] = toJsonValue(field.ref);
    root[section.key] = std::move(object);
  }
  return root.dump(2) + "\n";
}

std::string configFromJson(const std::string& text, ExperimentConfig& out) {
  if (std::string why = checkJsonDepth(text); !why.empty()) return why;
  Json root;
  try {
    root = Json::parse(text);
  } catch (const Json::exception& e) {  // a syntax error, or a number too large for a double (406)
    std::string why = e.what();  // "[json.exception.parse_error.101] parse error at line 3, ..."
    const size_t bracket = why.find("] ");
    return "not valid JSON: " + (bracket == std::string::npos ? why : why.substr(bracket + 2));
  }
  if (!root.is_object()) return "the top level must be a JSON object, got " + shown(root);

  // The format is checked first: another format's keys would only produce confusing errors.
  if (auto it = root.find("format"); it != root.end()) {
    if (!it->is_string()) return "format must be a string, got " + shown(*it);
    if (*it != kFormat)
      return "format " + shown(*it) + " is not supported (this version reads \"" + std::string(kFormat) + "\")";
  }

  ExperimentConfig parsed;  // missing keys keep the defaults; `out` changes only on success
  std::vector<Field> top = topFieldsOf(parsed);
  std::vector<Section> sections = sectionsOf(parsed);
  for (const auto& [key, value] : root.items()) {
    if (key == "format") continue;
    std::string err;
    if (Field* field = findByKey(top, key)) err = std::visit(JsonReader{value, key}, field->ref);
    else if (Section* section = findByKey(sections, key)) err = readFields(value, section->fields, key);
    else err = "unknown key " + key + " (top-level keys: format, " + keyList(top) + ", " + keyList(sections) + ")";
    if (!err.empty()) return err;
  }
  out = std::move(parsed);
  return {};
}

std::vector<std::string> presetNames() {
  std::vector<std::string> names;
  for (const auto& preset : embeddedPresets()) names.emplace_back(preset.first);
  std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
    if (a == "default" || b == "default") return a == "default" && b != "default";
    return a < b;
  });
  return names;
}

std::string loadPreset(const std::string& name, ExperimentConfig& out) {
  for (const auto& [presetName, text] : embeddedPresets()) {
    if (presetName != name) continue;
    const std::string err = configFromJson(std::string(text), out);
    return err.empty() ? err : "preset " + name + ": " + err;
  }
  std::string known;
  for (const std::string& n : presetNames()) known += (known.empty() ? "" : ", ") + n;
  return "unknown preset " + quoteText(name) + " (presets: " + known + ")";
}

std::string applyOverride(ExperimentConfig& config, const std::string& assignment) {
  const size_t eq = assignment.find('=');
  if (eq == std::string::npos) return "expected section.key=value, got " + quoteText(assignment);
  ExperimentConfig edited = config;  // `config` changes only on success
  const std::string err = applyTo(edited, trim(std::string_view(assignment).substr(0, eq)),
                                  trim(std::string_view(assignment).substr(eq + 1)));
  if (err.empty()) config = std::move(edited);
  return err;
}

}  // namespace attnlab
