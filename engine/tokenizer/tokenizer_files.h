#pragma once
// Reading a tokenizer from the files a Hugging Face model folder holds, and writing one.
#include <memory>
#include <string>

#include "tokenizer/tokenizer.h"

namespace attnlab {

// `path` is a tokenizer.json, a vocab.json (merges.txt beside it), or a folder holding either;
// tokenizer_config.json and generation_config.json beside them are read when present (BOS/EOS,
// add_bos_token, added tokens). Returns null and sets `error` (one line naming the file) on failure.
std::unique_ptr<Tokenizer> loadTokenizer(const std::string& path, std::string& error);

// The pieces, also used by tests and the checkpoint.
std::string parseTokenizerJson(const std::string& text, const std::string& source, TokenizerSpec& spec);
std::string parseVocabAndMerges(const std::string& vocabJson, const std::string& mergesTxt, const std::string& source,
                                TokenizerSpec& spec);
std::unique_ptr<Tokenizer> makeTokenizer(const TokenizerSpec& spec, std::string& error);
// A tokenizer.json for a byte_level_bpe spec (GPT-2's split pattern steps), as Hugging Face writes one.
std::string byteLevelTokenizerJson(const TokenizerSpec& spec);

}  // namespace attnlab
