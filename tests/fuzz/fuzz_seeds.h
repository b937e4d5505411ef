#pragma once
// What the fuzz targets and their seed writer (make_seeds.cpp) share: the parameters the lab's
// safetensors target expects, the valid sharded folder around a fuzzed index, and how a parsed
// tokenizer is exercised.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "io/checkpoint.h"
#include "tokenizer/tokenizer_files.h"

namespace attnlab::fuzz {

inline ParamStore labParams() {
  ParamStore params;
  params.add("embed", {5, 3});
  params.add("norm.gain", {3});
  return params;
}

constexpr const char* kShards[] = {"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"};

// config.json of a tiny GPT-2 and its two shards: wte.weight in the first, wpe.weight in the second.
inline void writeShardedFolder(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "config.json")
      << R"({"model_type": "gpt2", "vocab_size": 6, "n_embd": 4, "n_layer": 1, "n_head": 1, "n_positions": 8})";
  ParamStore first, second;
  first.add("wte.weight", {6, 4});
  second.add("wpe.weight", {8, 4});
  if (!writeSafetensors((dir / kShards[0]).string(), first).empty() || !writeSafetensors((dir / kShards[1]).string(), second).empty())
    std::abort();
}

// Builds the tokenizer and runs a fixed text through it and back.
inline void exercise(const TokenizerSpec& spec) {
  std::string error;
  std::unique_ptr<Tokenizer> tokenizer = makeTokenizer(spec, error);
  if (!tokenizer) return;
  std::vector<int> ids;
  if (!tokenizer->encode("Hello w\xC3\xB6rld  123\n\t<|endoftext|> \xE2\x96\x81x \xF0\x9F\x98\x80", ids, true).empty()) return;
  std::string text;
  tokenizer->decode(ids, text);
}

}  // namespace attnlab::fuzz
