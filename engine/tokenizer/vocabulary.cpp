#include "tokenizer/vocabulary.h"

#include <stdexcept>

#include "core/utf8.h"
#include "tokenizer/tokenizer.h"

namespace attnlab {

namespace {

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

std::string unknownTokenMessage(const std::string& token, int position, int vocabularySize) {
  return "unknown token '" + printableToken(token) + "' at position " + std::to_string(position) +
         "; the vocabulary has " + std::to_string(vocabularySize) + " tokens";
}

}  // namespace

// Malformed token lists are programming errors (tasks build them), hence exceptions.
Vocabulary::Vocabulary(std::vector<std::string> tokens, Level level) : tokens_(std::move(tokens)), level_(level) {
  index_.reserve(tokens_.size());
  for (int id = 0; id < size(); ++id) {
    const std::string& t = tokens_[id];
    if (t.empty()) throw std::invalid_argument("vocabulary: token " + std::to_string(id) + " is empty");
    if (level_ == Level::Character && utf8CodePointLength(t, 0) != static_cast<int>(t.size()))
      throw std::invalid_argument("vocabulary: '" + printableToken(t) + "' is not one UTF-8 character");
    if (level_ == Level::Word)
      for (const char c : t)
        if (isSpace(c)) throw std::invalid_argument("vocabulary: word '" + printableToken(t) + "' contains whitespace");
    if (!index_.emplace(t, id).second)
      throw std::invalid_argument("vocabulary: token '" + printableToken(t) + "' appears twice");
  }
}

// Display forms can coincide (a real "␣" and a leading space); the first id keeps the name.
Vocabulary::Vocabulary(std::shared_ptr<const Tokenizer> tokenizer) : tokenizer_(std::move(tokenizer)), level_(Level::Subword) {
  tokens_.reserve(tokenizer_->vocabSize());
  for (int id = 0; id < tokenizer_->vocabSize(); ++id) {
    tokens_.push_back(tokenizer_->displayToken(id));
    index_.emplace(tokens_.back(), id);
  }
}

int Vocabulary::id(const std::string& token) const {
  auto it = index_.find(token);
  return it == index_.end() ? -1 : it->second;
}

bool Vocabulary::encode(const std::string& text, std::vector<int>& ids, std::string& error) const {
  ids.clear();
  if (tokenizer_) {
    error = tokenizer_->encode(text, ids);
    return error.empty();
  }
  if (level_ == Level::Word) {
    size_t pos = 0;
    while (true) {
      while (pos < text.size() && isSpace(text[pos])) ++pos;
      if (pos == text.size()) return true;
      size_t end = pos;
      while (end < text.size() && !isSpace(text[end])) ++end;
      const std::string word = text.substr(pos, end - pos);
      const int tokenId = id(word);
      if (tokenId < 0) {
        error = unknownTokenMessage(word, static_cast<int>(ids.size()), size());
        return false;
      }
      ids.push_back(tokenId);
      pos = end;
    }
  }
  for (size_t pos = 0; pos < text.size();) {
    const int length = utf8CodePointLength(text, pos);
    if (length == 0) {
      error = "invalid UTF-8 at byte " + std::to_string(pos) + " (character " + std::to_string(ids.size()) + ")";
      return false;
    }
    const std::string character = text.substr(pos, length);
    const int tokenId = id(character);
    if (tokenId < 0) {
      error = unknownTokenMessage(character, static_cast<int>(ids.size()), size());
      return false;
    }
    ids.push_back(tokenId);
    pos += length;
  }
  return true;
}

// Ids outside the vocabulary decode as "<?>" so that a display never throws.
std::string Vocabulary::decode(const std::vector<int>& ids) const {
  std::string out;
  if (tokenizer_ && tokenizer_->decode(ids, out).empty()) return out;
  out.clear();  // an id outside the tokenizer's vocabulary: shown token by token below
  for (size_t i = 0; i < ids.size(); ++i) {
    if (level_ == Level::Word && i > 0) out += ' ';
    out += ids[i] >= 0 && ids[i] < size() ? tokens_[ids[i]] : std::string("<?>");
  }
  return out;
}

std::vector<std::string> splitUtf8(const std::string& text) {
  std::vector<std::string> out;
  for (size_t pos = 0; pos < text.size();) {
    const int length = utf8CodePointLength(text, pos);
    if (length == 0) {
      out.emplace_back("\xEF\xBF\xBD");  // U+FFFD REPLACEMENT CHARACTER, one per invalid byte
      ++pos;
    } else {
      out.push_back(text.substr(pos, length));
      pos += length;
    }
  }
  return out;
}

}  // namespace attnlab
