#pragma once
// Token <-> id mapping. Word-level vocabularies split text on whitespace; character-level
// ones map each UTF-8 code point to a token; subword ones encode with a BPE tokenizer, and
// their token strings are its display forms (a leading space shown as ␣).
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace attnlab {

class Tokenizer;

class Vocabulary {
 public:
  enum class Level { Word, Character, Subword };

  Vocabulary() = default;
  Vocabulary(std::vector<std::string> tokens, Level level);
  explicit Vocabulary(std::shared_ptr<const Tokenizer> tokenizer);

  int size() const { return static_cast<int>(tokens_.size()); }
  Level level() const { return level_; }
  const std::string& token(int id) const { return tokens_.at(id); }
  const std::vector<std::string>& tokens() const { return tokens_; }
  int id(const std::string& token) const;  // -1 when unknown

  // Splits text into tokens and maps them. On an unknown token returns false and sets `error`
  // to a message naming the token and its position.
  bool encode(const std::string& text, std::vector<int>& ids, std::string& error) const;
  std::string decode(const std::vector<int>& ids) const;
  const Tokenizer* tokenizer() const { return tokenizer_.get(); }  // null unless Subword

 private:
  std::shared_ptr<const Tokenizer> tokenizer_;
  std::vector<std::string> tokens_;
  std::unordered_map<std::string, int> index_;
  Level level_ = Level::Word;
};

// Splits UTF-8 text into code points (invalid bytes become U+FFFD's encoding).
std::vector<std::string> splitUtf8(const std::string& text);

}  // namespace attnlab
