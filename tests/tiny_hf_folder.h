#pragma once
// Writes tiny random Hugging Face folders. GPT-2-shaped: config.json, model.safetensors with
// GPT-2's tensor names, and a byte-level tokenizer.json whose tokenizer_config.json asks for a
// BOS (<|endoftext|>, id 258). Ids: the 256 byte tokens, "Ġw" 256, "Ġwo" 257, "<|endoftext|>" 258;
// the model has one embedding row more (259) than the tokenizer has tokens.
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "core/random.h"
#include "io/checkpoint.h"
#include "tokenizer/byte_alphabet.h"
#include "tokenizer/unicode_classes.h"

namespace tiny_hf {

constexpr int kVocab = 260, kBos = 258;

// The byte-level tokenizer both folders share (ids above), with tokenizer_config.json's BOS.
inline void writeByteTokenizer(const std::filesystem::path& dir) {
  using nlohmann::json;
  json vocab = json::object();
  for (int b = 0; b < 256; ++b) vocab[attnlab::encodeCodePoint(attnlab::byteToCodePoint(static_cast<unsigned char>(b)))] = b;
  vocab["Ġw"] = 256;
  vocab["Ġwo"] = 257;
  vocab["<|endoftext|>"] = kBos;
  const json byteLevel = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}};
  const json tokenizer = {
      {"version", "1.0"},
      {"added_tokens", json::array({{{"id", kBos}, {"content", "<|endoftext|>"}, {"single_word", false}, {"lstrip", false},
                                     {"rstrip", false}, {"normalized", false}, {"special", true}}})},
      {"normalizer", nullptr},
      {"pre_tokenizer", byteLevel},
      {"post_processor", nullptr},
      {"decoder", byteLevel},
      {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", json::array({"Ġ w", "Ġw o"})}}}};
  std::ofstream(dir / "tokenizer.json") << tokenizer.dump();
  std::ofstream(dir / "tokenizer_config.json") << R"({"bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>", "add_bos_token": true})";
}

// Returns "" or the reason writing failed. A `vocab` other than kVocab writes no tokenizer (the
// app then labels the ids by number).
inline std::string writeGpt2Folder(const std::filesystem::path& dir, int layers = 2, int heads = 2, int width = 8,
                                   int context = 64, int vocab = kVocab) {
  using nlohmann::json;
  std::filesystem::create_directories(dir);
  const int d = width, ff = 4 * width;
  std::ofstream(dir / "config.json") << json{{"model_type", "gpt2"}, {"vocab_size", vocab}, {"n_embd", d},
                                             {"n_layer", layers}, {"n_head", heads}, {"n_positions", context}}
                                            .dump();
  attnlab::ParamStore s;
  auto add = [&](const std::string& n, std::vector<int> shape) { s.add(n, std::move(shape)); };
  add("wte.weight", {vocab, d});
  add("wpe.weight", {context, d});
  for (int l = 0; l < layers; ++l) {
    const std::string p = "h." + std::to_string(l) + ".";
    for (const char* n : {"ln_1", "ln_2"}) {
      add(p + n + ".weight", {d});
      add(p + n + ".bias", {d});
    }
    add(p + "attn.c_attn.weight", {d, 3 * d});
    add(p + "attn.c_attn.bias", {3 * d});
    add(p + "attn.c_proj.weight", {d, d});
    add(p + "attn.c_proj.bias", {d});
    add(p + "mlp.c_fc.weight", {d, ff});
    add(p + "mlp.c_fc.bias", {ff});
    add(p + "mlp.c_proj.weight", {ff, d});
    add(p + "mlp.c_proj.bias", {d});
  }
  add("ln_f.weight", {d});
  add("ln_f.bias", {d});
  attnlab::Rng rng(5);
  for (auto& p : s.all()) {
    const bool gain = p->name.find("ln_") != std::string::npos && p->name.find(".weight") != std::string::npos;
    for (Eigen::Index i = 0; i < p->value.size(); ++i) p->value.data()[i] = rng.normal(0.f, 0.5f) + (gain ? 1.f : 0.f);
  }
  if (std::string why = attnlab::writeSafetensors((dir / "model.safetensors").string(), s); !why.empty()) return why;

  if (vocab == kVocab) writeByteTokenizer(dir);
  return {};
}

// The same for a Llama-shaped folder: RMSNorm, SwiGLU, RoPE, `kvHeads` grouped KV heads, untied head.
inline std::string writeLlamaFolder(const std::filesystem::path& dir, int layers = 2, int heads = 4, int kvHeads = 2, int width = 16,
                                    int context = 64, int vocab = kVocab) {
  using nlohmann::json;
  std::filesystem::create_directories(dir);
  const int d = width, ff = 2 * width, dh = width / heads;
  std::ofstream(dir / "config.json") << json{{"model_type", "llama"}, {"vocab_size", vocab}, {"hidden_size", d},
                                             {"intermediate_size", ff}, {"num_hidden_layers", layers}, {"num_attention_heads", heads},
                                             {"num_key_value_heads", kvHeads}, {"max_position_embeddings", context},
                                             {"rms_norm_eps", 1e-5}, {"tie_word_embeddings", false}}
                                            .dump();
  attnlab::ParamStore s;
  auto add = [&](const std::string& n, std::vector<int> shape) { s.add(n, std::move(shape)); };
  add("model.embed_tokens.weight", {vocab, d});
  for (int l = 0; l < layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    add(p + "input_layernorm.weight", {d});
    add(p + "self_attn.q_proj.weight", {heads * dh, d});
    add(p + "self_attn.k_proj.weight", {kvHeads * dh, d});
    add(p + "self_attn.v_proj.weight", {kvHeads * dh, d});
    add(p + "self_attn.o_proj.weight", {d, heads * dh});
    add(p + "post_attention_layernorm.weight", {d});
    add(p + "mlp.gate_proj.weight", {ff, d});
    add(p + "mlp.up_proj.weight", {ff, d});
    add(p + "mlp.down_proj.weight", {d, ff});
  }
  add("model.norm.weight", {d});
  add("lm_head.weight", {vocab, d});
  attnlab::Rng rng(6);
  for (auto& p : s.all()) {
    const bool gain = p->name.find("norm") != std::string::npos;
    for (Eigen::Index i = 0; i < p->value.size(); ++i) p->value.data()[i] = rng.normal(0.f, 0.5f) + (gain ? 1.f : 0.f);
  }
  if (std::string why = attnlab::writeSafetensors((dir / "model.safetensors").string(), s); !why.empty()) return why;
  if (vocab == kVocab) writeByteTokenizer(dir);
  return {};
}

}  // namespace tiny_hf
