#pragma once
// A subword tokenizer: text <-> token ids, as a model's tokenizer files define it.
// Kinds register in TokenizerRegistry, one file each (byte_level_bpe.cpp, sentencepiece_bpe.cpp);
// tokenizer_files.cpp reads the files into a TokenizerSpec and picks the kind.
#include <array>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/registry.h"
#include "tokenizer/bpe_merges.h"
#include "tokenizer/tokenizer_spec.h"

namespace attnlab {

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  // Builds from the spec; "" or a one-line reason (a merge naming an unknown token, ...).
  std::string build(const TokenizerSpec& spec);
  const TokenizerSpec& spec() const { return spec_; }

  // Text to ids. Added tokens (<|endoftext|>, <s>, ...) written in the text become their ids.
  // With `addSpecial`, the BOS/EOS the post-processor (or tokenizer_config.json) asks for are added.
  // Returns "" or a one-line reason (invalid UTF-8, naming the byte offset).
  std::string encode(std::string_view text, std::vector<int>& ids, bool addSpecial = false) const;
  // Ids to text; "" or a one-line reason (an id outside the vocabulary). Ids that end inside a
  // UTF-8 sequence give those bytes as they are.
  std::string decode(const std::vector<int>& ids, std::string& text) const;

  int vocabSize() const { return static_cast<int>(tokens_.size()); }
  int id(const std::string& token) const;               // -1 when the vocabulary has no such token
  const std::string& token(int id) const { return tokens_.at(id); }  // as the vocabulary spells it
  std::string tokenBytes(int id) const;                 // the text one token stands for
  // The token as people read it: its text with a leading space shown as ␣ (U+2423), a newline as
  // ↵, a tab as ⇥, and bytes that are not whole UTF-8 characters as <0xNN>; added tokens as spelled.
  std::string displayToken(int id) const;
  bool isAdded(int id) const;

 protected:
  // Appends the ids of an ordinary text segment (no added tokens in it). `first` is true for the
  // segment at the start of the text.
  virtual void encodeSegment(std::string_view segment, bool first, std::vector<int>& ids) const = 0;
  // Appends the bytes of ordinary (not added) token `id`; called for each token in order.
  virtual void appendBytes(int id, std::string& out) const = 0;
  // Called on the decoded text of each ordinary run (ids between added tokens); `first` as above.
  virtual void finishSegment(std::string& /*segment*/, bool /*first*/) const {}
  // Kind-specific checks of the spec; "" or a reason. Called after the vocabulary and merges are read.
  virtual std::string prepare() { return {}; }

  // Symbols of `word` (token ids) merged by the model's rules.
  void merge(std::vector<int>& symbols) const { merges_.apply(symbols); }

  TokenizerSpec spec_;
  std::vector<std::string> tokens_;
  std::unordered_map<std::string, int> index_;

 private:
  size_t addedTokenAt(std::string_view text, size_t pos, int& addedId) const;

  BpeMerges merges_;
  std::vector<int> addedIds_;  // longest content first, so that the longest match wins
  std::vector<bool> added_;
  std::array<bool, 256> addedFirstByte_{};  // a quick "no added token starts here"
};

// "0x41": a byte for messages; "<0x41>": the name of its byte-fallback token.
std::string hexByte(char byte);
std::string byteTokenName(char byte);

using TokenizerRegistry = Registry<Tokenizer>;

}  // namespace attnlab
