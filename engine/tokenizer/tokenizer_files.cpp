// tokenizer.json is read for the parts that decide ids (model, normalizer, pre_tokenizer,
// added_tokens, post_processor); any part whose type is not understood is refused by name rather
// than ignored, so a tokenizer either encodes as its files say or does not load.
#include "tokenizer/tokenizer_files.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/utf8.h"
#include "core/files.h"
#include "core/folder_links.h"
#include "core/json_limits.h"

namespace attnlab {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const std::string kMetaspace = "\u2581";

std::string typeOf(const json& j) { return j.is_object() && j.contains("type") && j["type"].is_string() ? j["type"].get<std::string>() : ""; }

bool flag(const json& j, const char* key, bool otherwise) {
  return j.is_object() && j.contains(key) && j[key].is_boolean() ? j[key].get<bool>() : otherwise;
}

// A special token in tokenizer_config.json: "<s>" or {"content": "<s>", ...}.
std::string tokenContent(const json& j) {
  if (j.is_string()) return j.get<std::string>();
  if (j.is_object() && j.contains("content") && j["content"].is_string()) return j["content"].get<std::string>();
  return {};
}

int firstId(const json& j) {
  if (j.is_number_integer()) return j.get<int>();
  if (j.is_array() && !j.empty() && j[0].is_number_integer()) return j[0].get<int>();
  return -1;
}

std::string readVocab(const json& vocab, TokenizerSpec& spec) {
  if (!vocab.is_object()) return "the vocabulary is not an object of token: id";
  for (const auto& [token, id] : vocab.items()) {
    if (!id.is_number_integer() || id.get<long>() < 0 || id.get<long>() > 10'000'000)
      return "token '" + printableToken(token) + "' has no valid id";
    const auto i = id.get<size_t>();
    if (i >= spec.vocab.size()) spec.vocab.resize(i + 1);
    if (!spec.vocab[i].empty()) return "id " + std::to_string(i) + " is given to two tokens";
    spec.vocab[i] = token;
  }
  return {};
}

std::string readMergeLines(const std::string& text, TokenizerSpec& spec) {
  std::istringstream in(text);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || (number == 1 && line.rfind("#version", 0) == 0)) continue;
    const size_t space = line.find(' ');
    if (space == std::string::npos || space == 0 || space + 1 == line.size() || line.find(' ', space + 1) != std::string::npos)
      return "line " + std::to_string(number) + " is not two tokens separated by one space";
    spec.merges.emplace_back(line.substr(0, space), line.substr(space + 1));
  }
  return {};
}

std::string readModel(const json& model, TokenizerSpec& spec) {
  if (typeOf(model) != "BPE") return "model type '" + typeOf(model) + "' is not supported (only BPE)";
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix", "dropout"})
    if (model.contains(key) && !model[key].is_null() && !(model[key].is_string() && model[key].get<std::string>().empty()))
      return std::string("model.") + key + " is not supported";
  if (std::string why = readVocab(model.value("vocab", json()), spec); !why.empty()) return "model.vocab: " + why;
  const json merges = model.value("merges", json::array());
  if (!merges.is_array()) return "model.merges is not a list";
  for (const json& m : merges) {
    if (m.is_string()) {
      if (std::string why = readMergeLines(m.get<std::string>(), spec); !why.empty()) return "model.merges: '" + m.get<std::string>() + "' " + why;
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      spec.merges.emplace_back(m[0].get<std::string>(), m[1].get<std::string>());
    } else {
      return "model.merges holds an entry that is neither \"a b\" nor [\"a\", \"b\"]";
    }
  }
  spec.byteFallback = flag(model, "byte_fallback", false);
  spec.fuseUnk = flag(model, "fuse_unk", false);
  spec.ignoreMerges = flag(model, "ignore_merges", false);
  if (model.contains("unk_token") && model["unk_token"].is_string()) spec.unk = model["unk_token"].get<std::string>();
  return {};
}

// Llama 2's normalizer: Prepend("▁") then Replace(" " -> "▁"), alone or in a Sequence; Qwen2's:
// NFC (tokenizer/nfc.h).
std::string readNormalizer(const json& normalizer, bool& sentencePiece, bool& nfc) {
  if (normalizer.is_null()) return {};
  const std::string type = typeOf(normalizer);
  if (type == "Sequence") {
    for (const json& n : normalizer.value("normalizers", json::array()))
      if (std::string why = readNormalizer(n, sentencePiece, nfc); !why.empty()) return why;
    return {};
  }
  if (type == "NFC") {
    nfc = true;
    return {};
  }
  if (type == "Prepend" && normalizer.value("prepend", "") == kMetaspace) {
    sentencePiece = true;
    return {};
  }
  if (type == "Replace" && normalizer.value("content", "") == kMetaspace && normalizer.contains("pattern") &&
      normalizer["pattern"].value("String", "") == " ")
    return {};
  return "normalizer '" + type + "' is not supported (NFC, and Llama 2's Prepend/Replace of \u2581, are)";
}

std::string readPreTokenizer(const json& pre, TokenizerSpec& spec, bool& byteLevel, bool& metaspace) {
  if (pre.is_null()) return {};
  const std::string type = typeOf(pre);
  if (type == "Sequence") {
    for (const json& p : pre.value("pretokenizers", json::array()))
      if (std::string why = readPreTokenizer(p, spec, byteLevel, metaspace); !why.empty()) return why;
    return {};
  }
  if (type == "ByteLevel") {
    byteLevel = true;
    if (flag(pre, "add_prefix_space", false)) return "pre_tokenizer ByteLevel with add_prefix_space is not supported";
    if (flag(pre, "use_regex", true)) spec.steps.push_back({PreTokenizeStep::Kind::Pattern, SplitPattern::Gpt2});
    return {};
  }
  if (type == "Split") {
    const json pattern = pre.value("pattern", json::object());
    const std::string regex = pattern.value("Regex", "");
    SplitPattern known{};
    if (!splitPatternFromRegex(regex, known))
      return "pre_tokenizer Split pattern '" + printableToken(regex) + "' is not one of the known ones (GPT-2, Llama 3, Qwen2)";
    if (pre.value("behavior", "") != "Isolated" || flag(pre, "invert", false))
      return "pre_tokenizer Split must be Isolated and not inverted";
    spec.steps.push_back({PreTokenizeStep::Kind::Pattern, known});
    return {};
  }
  if (type == "Digits") {
    if (!flag(pre, "individual_digits", false)) return "pre_tokenizer Digits is supported only with individual_digits";
    spec.steps.push_back({PreTokenizeStep::Kind::Digits, {}});
    return {};
  }
  if (type == "Metaspace") {
    metaspace = true;
    if (pre.value("replacement", kMetaspace) != kMetaspace) return "pre_tokenizer Metaspace must replace with \u2581";
    const std::string scheme = pre.value("prepend_scheme", flag(pre, "add_prefix_space", true) ? "always" : "never");
    if (scheme == "always") spec.prepend = PrependScheme::Always;
    else if (scheme == "first") spec.prepend = PrependScheme::First;
    else if (scheme == "never") spec.prepend = PrependScheme::Never;
    else return "pre_tokenizer Metaspace prepend_scheme '" + scheme + "' is unknown";
    spec.prependIfMissing = true;
    spec.splitOnMetaspace = flag(pre, "split", true);
    return {};
  }
  return "pre_tokenizer '" + type + "' is not supported";
}

std::string readAddedTokens(const json& added, TokenizerSpec& spec) {
  if (added.is_null()) return {};
  if (!added.is_array()) return "added_tokens is not a list";
  for (const json& a : added) {
    if (!a.is_object() || !a.contains("id") || !a["id"].is_number_integer() || !a.contains("content") || !a["content"].is_string())
      return "added_tokens holds an entry without id and content";
    spec.added.push_back({a["id"].get<int>(), a["content"].get<std::string>(), flag(a, "special", false),
                          flag(a, "lstrip", false), flag(a, "rstrip", false)});
  }
  return {};
}

// TemplateProcessing's "single" template: the special ids before and after the text ($A).
std::string readPostProcessor(const json& post, TokenizerSpec& spec, bool& hasTemplate) {
  if (post.is_null()) return {};
  const std::string type = typeOf(post);
  if (type == "Sequence") {
    for (const json& p : post.value("processors", json::array()))
      if (std::string why = readPostProcessor(p, spec, hasTemplate); !why.empty()) return why;
    return {};
  }
  if (type == "ByteLevel") return {};  // only adjusts offsets
  if (type != "TemplateProcessing") return "post_processor '" + type + "' is not supported";
  hasTemplate = true;
  bool afterText = false;
  for (const json& piece : post.value("single", json::array())) {
    if (piece.contains("Sequence")) {
      afterText = true;
      continue;
    }
    const std::string name = piece.contains("SpecialToken") ? piece["SpecialToken"].value("id", "") : "";
    const json special = post.value("special_tokens", json::object()).value(name, json::object());
    const json ids = special.value("ids", json::array());
    if (name.empty() || ids.empty()) return "post_processor template names special token '" + name + "' without ids";
    for (const json& id : ids) (afterText ? spec.suffix : spec.prefix).push_back(id.get<int>());
  }
  return {};
}

int vocabId(const TokenizerSpec& spec, const std::string& token) {
  for (const AddedToken& a : spec.added)
    if (a.content == token) return a.id;
  for (size_t i = 0; i < spec.vocab.size(); ++i)
    if (spec.vocab[i] == token) return static_cast<int>(i);
  return -1;
}

// tokenizer_config.json and generation_config.json: BOS/EOS and, without a template, whether to add them.
std::string readConfigs(const fs::path& folder, TokenizerSpec& spec, bool hasTemplate) {
  json tokenizerConfig = json::object(), generationConfig = json::object();
  for (auto [name, target] : {std::pair{"tokenizer_config.json", &tokenizerConfig}, std::pair{"generation_config.json", &generationConfig}}) {
    const fs::path path = folder / name;
    std::error_code ec;
    if (!fs::exists(path, ec)) continue;
    std::string text;
    if (std::string why = readWholeFile(path.string(), text); !why.empty()) return why;
    if (std::string why = checkJsonDepth(text); !why.empty()) return path.string() + ": " + why;
    *target = json::parse(text, nullptr, false);
    if (!target->is_object()) return path.string() + ": not a JSON object";
  }
  auto isAdded = [&](const std::string& content) {
    return std::any_of(spec.added.begin(), spec.added.end(), [&](const AddedToken& a) { return a.content == content; });
  };
  // Held by name: items() of the temporary value() returns would outlive it (a use after scope).
  const json decoder = tokenizerConfig.value("added_tokens_decoder", json::object());
  for (const auto& [key, entry] : decoder.items()) {
    const std::string content = tokenContent(entry);
    if (content.empty() || isAdded(content)) continue;
    int id = -1;
    const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), id);
    if (ec != std::errc() || end != key.data() + key.size() || id < 0)
      return (folder / "tokenizer_config.json").string() + ": added_tokens_decoder key '" + printableToken(key) + "' is not a token id";
    spec.added.push_back({id, content, flag(entry, "special", true), flag(entry, "lstrip", false), flag(entry, "rstrip", false)});
  }
  // The named specials are never split, as the slow tokenizers treat them.
  for (const char* key : {"bos_token", "eos_token", "unk_token", "pad_token"}) {
    const std::string content = tokenizerConfig.contains(key) ? tokenContent(tokenizerConfig[key]) : "";
    const int id = content.empty() ? -1 : vocabId(spec, content);
    if (id >= 0 && !isAdded(content)) spec.added.push_back({id, content, true, false, false});
  }
  auto special = [&](const char* tokenKey, const char* idKey) {
    const int fromName = tokenizerConfig.contains(tokenKey) ? vocabId(spec, tokenContent(tokenizerConfig[tokenKey])) : -1;
    return fromName >= 0 ? fromName : firstId(generationConfig.value(idKey, json()));
  };
  spec.bos = special("bos_token", "bos_token_id");
  spec.eos = special("eos_token", "eos_token_id");
  if (!hasTemplate) {
    if (flag(tokenizerConfig, "add_bos_token", false) && spec.bos >= 0) spec.prefix = {spec.bos};
    if (flag(tokenizerConfig, "add_eos_token", false) && spec.eos >= 0) spec.suffix = {spec.eos};
  }
  return {};
}

}  // namespace

std::string parseTokenizerJson(const std::string& text, const std::string& source, TokenizerSpec& spec) {
  spec = TokenizerSpec();
  spec.source = source;
  if (std::string why = checkJsonDepth(text); !why.empty()) return source + ": " + why;
  const json root = json::parse(text, nullptr, false);
  if (!root.is_object()) return source + ": not a JSON object (truncated or not a tokenizer.json?)";
  if (!root.contains("model")) return source + ": no \"model\" (not a tokenizer.json?)";
  try {
    bool sentencePiece = false, byteLevel = false, metaspace = false, hasTemplate = false;
    std::string why = readModel(root["model"], spec);
    if (why.empty()) why = readNormalizer(root.value("normalizer", json()), sentencePiece, spec.nfc);
    if (why.empty()) why = readPreTokenizer(root.value("pre_tokenizer", json()), spec, byteLevel, metaspace);
    if (why.empty()) why = readAddedTokens(root.value("added_tokens", json()), spec);
    if (why.empty()) why = readPostProcessor(root.value("post_processor", json()), spec, hasTemplate);
    if (!why.empty()) return source + ": " + why;
    if (byteLevel && (sentencePiece || metaspace)) return source + ": mixes ByteLevel and Metaspace, which is not supported";
    if (!byteLevel && !sentencePiece && !metaspace)
      return source + ": neither a ByteLevel nor a Metaspace tokenizer (no ByteLevel pre-tokenizer, no \u2581 prepending)";
    spec.kind = byteLevel ? "byte_level_bpe" : "sentencepiece_bpe";
    return readConfigs(fs::path(source).parent_path(), spec, hasTemplate);
  } catch (const json::exception& e) {
    return source + ": unexpected structure (" + e.what() + ")";
  }
}

std::string parseVocabAndMerges(const std::string& vocabJson, const std::string& mergesTxt, const std::string& source,
                                TokenizerSpec& spec) {
  spec = TokenizerSpec();
  spec.source = source;
  spec.kind = "byte_level_bpe";
  spec.steps = {{PreTokenizeStep::Kind::Pattern, SplitPattern::Gpt2}};
  if (std::string why = checkJsonDepth(vocabJson); !why.empty()) return source + ": " + why;
  const json vocab = json::parse(vocabJson, nullptr, false);
  if (std::string why = readVocab(vocab, spec); !why.empty()) return source + ": " + why;
  const fs::path merges = fs::path(source).parent_path() / "merges.txt";
  if (std::string why = readMergeLines(mergesTxt, spec); !why.empty()) return merges.string() + ": " + why;
  return readConfigs(fs::path(source).parent_path(), spec, false);
}

std::unique_ptr<Tokenizer> makeTokenizer(const TokenizerSpec& spec, std::string& error) {
  auto tokenizer = TokenizerRegistry::instance().create(spec.kind);
  if (!tokenizer) {
    error = spec.source + ": unknown tokenizer kind '" + spec.kind + "' (known: " + TokenizerRegistry::instance().names() + ")";
    return nullptr;
  }
  error = tokenizer->build(spec);
  return error.empty() ? std::move(tokenizer) : nullptr;
}

std::unique_ptr<Tokenizer> loadTokenizer(const std::string& path, std::string& error) {
  std::error_code ec;
  fs::path file(path);
  if (fs::is_directory(file, ec)) {
    if ((error = checkLinksStayInFolder(path)); !error.empty()) return nullptr;
    if (fs::exists(file / "tokenizer.json", ec)) file /= "tokenizer.json";
    else if (fs::exists(file / "vocab.json", ec)) file /= "vocab.json";
    else {
      error = path + ": holds neither tokenizer.json nor vocab.json + merges.txt";
      return nullptr;
    }
  } else if (!fs::exists(file, ec)) {
    error = path + ": no such file or folder";
    return nullptr;
  }
  std::string text;
  if ((error = readWholeFile(file.string(), text)).empty()) {
    TokenizerSpec spec;
    if (file.filename() == "vocab.json") {
      const fs::path mergesPath = file.parent_path() / "merges.txt";
      std::string merges;
      if (!fs::exists(mergesPath, ec)) error = mergesPath.string() + ": missing (vocab.json needs merges.txt beside it)";
      else if ((error = readWholeFile(mergesPath.string(), merges)).empty())
        error = parseVocabAndMerges(text, merges, file.string(), spec);
    } else {
      error = parseTokenizerJson(text, file.string(), spec);
    }
    if (error.empty()) return makeTokenizer(spec, error);
  }
  return nullptr;
}

std::string byteLevelTokenizerJson(const TokenizerSpec& spec) {
  json vocab = json::object();
  for (size_t id = 0; id < spec.vocab.size(); ++id)
    if (!spec.vocab[id].empty()) vocab[spec.vocab[id]] = id;
  json merges = json::array();
  for (const auto& [left, right] : spec.merges) merges.push_back(json::array({left, right}));
  json added = json::array();
  for (const AddedToken& a : spec.added)
    added.push_back({{"id", a.id}, {"content", a.content}, {"single_word", false}, {"lstrip", a.lstrip},
                     {"rstrip", a.rstrip}, {"normalized", false}, {"special", a.special}});
  const json root = {
      {"version", "1.0"},
      {"truncation", nullptr},
      {"padding", nullptr},
      {"added_tokens", added},
      {"normalizer", spec.nfc ? json{{"type", "NFC"}} : json(nullptr)},
      {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}}},
      {"post_processor", nullptr},
      {"decoder", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}}},
      {"model",
       {{"type", "BPE"}, {"dropout", nullptr}, {"unk_token", nullptr}, {"continuing_subword_prefix", nullptr},
        {"end_of_word_suffix", nullptr}, {"fuse_unk", false}, {"byte_fallback", false}, {"vocab", vocab}, {"merges", merges}}}};
  return root.dump(1) + "\n";
}

}  // namespace attnlab
