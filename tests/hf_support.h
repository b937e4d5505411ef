#pragma once
// Tiny Hugging Face folders for the tests, one per architecture: config.json, random weights in the
// folder's own layout (a random engine model exported with hf/hf_export.h, whose inverse conversions
// the loader undoes), and a byte-level BPE tokenizer (vocab.json + merges.txt, 256 bytes and six
// merges) so that text reads as a pretrained model's does.
#include <QtTest>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "core/random.h"
#include "hf/hf_export.h"
#include "hf/hf_model.h"
#include "model/model.h"
#include "model/workspace.h"
#include "tokenizer/byte_alphabet.h"

namespace attnlab::testing {

namespace fs = std::filesystem;

struct TinyArchitecture {
  const char* label;
  const char* config;  // config.json
  bool prefixed = false;  // GPT-2 tensors named with "transformer."
};

constexpr int kTokenizerTokens = 262;

// Each architecture with the options the loaders read: GPT-2 in both name layouts, Llama with grouped
// KV heads, an untied head and llama3 frequency scaling, Qwen2 with q/k/v biases, a tied head and
// embedding rows beyond the tokenizer's, GPT-NeoX with partial rotary in both residual layouts.
inline const std::vector<TinyArchitecture>& tinyArchitectures() {
  static const std::vector<TinyArchitecture> all = {
      {"gpt2", R"({"model_type": "gpt2", "vocab_size": 262, "n_embd": 16, "n_layer": 2, "n_head": 2, "n_positions": 40})", true},
      {"gpt2_bare", R"({"model_type": "gpt2", "vocab_size": 262, "n_embd": 16, "n_layer": 1, "n_head": 4, "n_positions": 40})"},
      {"llama", R"({"model_type": "llama", "vocab_size": 262, "hidden_size": 16, "num_hidden_layers": 2, "num_attention_heads": 4,
                   "num_key_value_heads": 2, "intermediate_size": 24, "max_position_embeddings": 40, "rms_norm_eps": 1e-6,
                   "tie_word_embeddings": false, "rope_theta": 10000.0,
                   "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                    "original_max_position_embeddings": 16}})"},
      {"qwen2", R"({"model_type": "qwen2", "vocab_size": 272, "hidden_size": 16, "num_hidden_layers": 2, "num_attention_heads": 4,
                   "num_key_value_heads": 1, "intermediate_size": 24, "max_position_embeddings": 40, "rms_norm_eps": 1e-6,
                   "tie_word_embeddings": true, "rope_theta": 1000000.0})"},
      {"gpt_neox", R"({"model_type": "gpt_neox", "vocab_size": 262, "hidden_size": 16, "num_hidden_layers": 2, "num_attention_heads": 2,
                      "intermediate_size": 32, "rotary_pct": 0.25, "max_position_embeddings": 40, "use_parallel_residual": true})"},
      {"gpt_neox_sequential", R"({"model_type": "gpt_neox", "vocab_size": 262, "hidden_size": 16, "num_hidden_layers": 1,
                                 "num_attention_heads": 2, "intermediate_size": 32, "rotary_pct": 0.5, "max_position_embeddings": 40,
                                 "use_parallel_residual": false})"},
  };
  return all;
}

inline void writeTextFile(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

inline void writeTinyTokenizer(const fs::path& dir) {
  nlohmann::ordered_json vocab = nlohmann::ordered_json::object();
  for (int b = 0; b < 256; ++b) vocab[toByteAlphabet(std::string(1, static_cast<char>(b)))] = b;
  const std::vector<std::pair<std::string, std::string>> merges = {{"Ġ", "t"}, {"h", "e"}, {"Ġt", "he"},
                                                                   {"i", "n"}, {"Ġ", "a"}, {"e", "r"}};
  std::string mergesTxt = "#version: 0.2\n";
  for (const auto& [a, b] : merges) {
    vocab[a + b] = static_cast<int>(vocab.size());
    mergesTxt += a + " " + b + "\n";
  }
  QCOMPARE(static_cast<int>(vocab.size()), kTokenizerTokens);
  writeTextFile(dir / "vocab.json", vocab.dump());
  writeTextFile(dir / "merges.txt", mergesTxt);
}

// Perturbs every parameter so that no norm gain is exactly 1 and no bias exactly 0.
inline void perturb(Model& model, uint64_t seed) {
  Rng rng(seed);
  for (auto& p : model.params().all())
    for (Eigen::Index i = 0; i < p->value.size(); ++i) p->value.data()[i] += rng.normal(0.f, 0.3f);
}

// Writes the folder of `arch` under `dir` and returns "" or why not.
inline std::string writeTinyFolder(const TinyArchitecture& arch, const fs::path& dir, uint64_t seed = 7) {
  fs::remove_all(dir);
  writeTextFile(dir / "config.json", arch.config);
  writeTinyTokenizer(dir);
  hf::HfModelInfo info;
  if (std::string why = hf::readHfConfig(dir.string(), info); !why.empty()) return why;
  if (arch.prefixed) info.tensor_names = {"transformer.wte.weight"};
  Model model(info.config, seed);
  perturb(model, seed + 1);
  return hf::exportHfModel(model, info, dir.string());
}

// Logits [T, vocab] of `ids` (one sequence).
inline Mat logitsOf(const Model& model, const std::vector<int>& ids) {
  auto ws = makeWorkspace();
  const std::vector<int> targets(ids.size(), -1);
  model.forward(*ws, ids.data(), targets.data(), 1, static_cast<int>(ids.size()));
  return workspaceLogits(*ws);
}

// English-like text the tiny tokenizer merges in places: a few thousand characters.
inline std::string fineTuneText() {
  std::string text;
  for (int i = 0; i < 40; ++i)
    text += "the cat sat in the hat and the rat ran after the bat; winter " + std::to_string(i) + " gave the tern a perch.\n";
  return text;
}

}  // namespace attnlab::testing
