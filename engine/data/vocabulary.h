#pragma once
// Token <-> id mapping. Word-level vocabularies split text on whitespace; character-level
// ones map each UTF-8 code point to a token.
#include <string>
#include <unordered_map>
#include <vector>

namespace attnlab {

class Vocabulary {
 public:
  enum class Level { Word, Character };

  Vocabulary() = default;
  Vocabulary(std::vector<std::string> tokens, Level level);

  int size() const { return static_cast<int>(tokens_.size()); }
  Level level() const { return level_; }
  const std::string& token(int id) const { return tokens_.at(id); }
  const std::vector<std::string>& tokens() const { return tokens_; }
  int id(const std::string& token) const;  // -1 when unknown

  // Splits text into tokens and maps them. On an unknown token returns false and sets `error`
  // to a message naming the token and its position.
  bool encode(const std::string& text, std::vector<int>& ids, std::string& error) const;
  std::string decode(const std::vector<int>& ids) const;

 private:
  std::vector<std::string> tokens_;
  std::unordered_map<std::string, int> index_;
  Level level_ = Level::Word;
};

// Splits UTF-8 text into code points (invalid bytes become U+FFFD's encoding).
std::vector<std::string> splitUtf8(const std::string& text);

}  // namespace attnlab
