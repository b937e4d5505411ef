// The parts every kind shares: the vocabulary and merges, added tokens found in the text before
// the kind's own segmentation, the BOS/EOS template, and the display form of a token.
#include "tokenizer/tokenizer.h"

#include <algorithm>

#include "core/utf8.h"
#include "tokenizer/nfc.h"
#include "tokenizer/unicode_classes.h"

namespace attnlab {

std::string hexByte(char byte) {
  static const char* digits = "0123456789ABCDEF";
  const auto b = static_cast<unsigned char>(byte);
  return std::string("0x") + digits[b >> 4] + digits[b & 15];
}

constexpr int kMaxTokenId = 10'000'000;  // far above any real vocabulary; keeps a bad file from allocating gigabytes

std::string byteTokenName(char byte) {
  std::string name = "<";
  name += hexByte(byte);
  name += '>';
  return name;
}

std::string Tokenizer::build(const TokenizerSpec& spec) {
  spec_ = spec;
  tokens_ = spec.vocab;
  for (const AddedToken& a : spec.added) {
    if (a.id < 0 || a.id > kMaxTokenId)
      return spec.source + ": added token '" + printableToken(a.content) + "' has no valid id (" + std::to_string(a.id) + ")";
    if (a.content.empty()) return spec.source + ": added token " + std::to_string(a.id) + " is empty";
    if (a.id >= static_cast<int>(tokens_.size())) tokens_.resize(a.id + 1);
    if (!tokens_[a.id].empty() && tokens_[a.id] != a.content)
      return spec.source + ": added token '" + printableToken(a.content) + "' reuses id " + std::to_string(a.id) +
             " of '" + printableToken(tokens_[a.id]) + "'";
    tokens_[a.id] = a.content;
  }
  index_.clear();
  for (int id = 0; id < static_cast<int>(tokens_.size()); ++id)
    if (!tokens_[id].empty() && !index_.emplace(tokens_[id], id).second)
      return spec.source + ": token '" + printableToken(tokens_[id]) + "' appears twice (ids " +
             std::to_string(index_[tokens_[id]]) + " and " + std::to_string(id) + ")";
  if (index_.empty()) return spec.source + ": the vocabulary is empty";

  added_.assign(tokens_.size(), false);
  addedIds_.clear();
  addedFirstByte_.fill(false);
  for (const AddedToken& a : spec.added) {
    added_[a.id] = true;
    addedIds_.push_back(a.id);
    addedFirstByte_[static_cast<unsigned char>(a.content[0])] = true;
  }
  std::stable_sort(addedIds_.begin(), addedIds_.end(),
                   [this](int a, int b) { return tokens_[a].size() > tokens_[b].size(); });

  merges_ = BpeMerges();
  for (size_t i = 0; i < spec.merges.size(); ++i) {
    const auto& [left, right] = spec.merges[i];
    const int l = id(left), r = id(right), m = id(left + right);
    const std::string line = spec.source + ": merge " + std::to_string(i + 1) + " ('" + printableToken(left) + "' '" +
                             printableToken(right) + "')";
    if (l < 0 || r < 0) return line + " names a token the vocabulary lacks";
    if (m < 0) return line + " makes a token the vocabulary lacks";
    merges_.add(l, r, m);  // a repeated merge keeps its first rank, as the reference implementations do
  }
  auto known = [this](int id) { return id >= 0 && id < vocabSize() && !tokens_[id].empty(); };
  std::vector<int> specials = spec.prefix;  // must all be tokens; bos and eos may be -1 (none)
  specials.insert(specials.end(), spec.suffix.begin(), spec.suffix.end());
  for (int special : {spec.bos, spec.eos})
    if (special != -1) specials.push_back(special);
  for (int special : specials)
    if (!known(special)) return spec.source + ": special token id " + std::to_string(special) + " is not in the vocabulary";
  return prepare();
}

int Tokenizer::id(const std::string& token) const {
  const auto it = index_.find(token);
  return it == index_.end() ? -1 : it->second;
}

bool Tokenizer::isAdded(int id) const { return id >= 0 && id < static_cast<int>(added_.size()) && added_[id]; }

// Length in bytes of the added token matching at `pos` (with the whitespace its lstrip/rstrip
// swallow after it), or 0. lstrip is handled by the caller, which looks ahead from each whitespace.
size_t Tokenizer::addedTokenAt(std::string_view text, size_t pos, int& addedId) const {
  for (int candidate : addedIds_) {
    const std::string& content = tokens_[candidate];
    if (text.compare(pos, content.size(), content) != 0) continue;
    addedId = candidate;
    size_t end = pos + content.size();
    const auto& spec = *std::find_if(spec_.added.begin(), spec_.added.end(),
                                     [&](const AddedToken& a) { return a.id == candidate; });
    if (spec.rstrip)
      while (end < text.size() && utf8CodePointLength(text, end) == 1 && isWhiteSpace(static_cast<unsigned char>(text[end])))
        ++end;
    return end - pos;
  }
  return 0;
}

std::string Tokenizer::encode(std::string_view text, std::vector<int>& ids, bool addSpecial) const {
  ids.clear();
  if (const size_t bad = firstInvalidUtf8(text); bad != std::string::npos)
    return "the text is not valid UTF-8 (byte " + hexByte(text[bad]) + " at offset " + std::to_string(bad) + ")";
  if (addSpecial) ids = spec_.prefix;
  size_t start = 0;  // of the ordinary segment being collected
  bool first = true;
  auto flush = [&](size_t end) {
    if (end > start) {
      const std::string_view segment = text.substr(start, end - start);
      if (spec_.nfc) encodeSegment(toNfc(segment), first, ids);  // added tokens are matched before normalizing, as Hugging Face does
      else encodeSegment(segment, first, ids);
    }
    first = false;
  };
  for (size_t pos = 0; pos < text.size();) {
    int addedId = -1;
    const size_t length = addedFirstByte_[static_cast<unsigned char>(text[pos])] ? addedTokenAt(text, pos, addedId) : 0;
    if (length == 0) {
      ++pos;
      continue;
    }
    size_t segmentEnd = pos;
    const bool lstrip = std::any_of(spec_.added.begin(), spec_.added.end(),
                                    [&](const AddedToken& a) { return a.id == addedId && a.lstrip; });
    if (lstrip)
      while (segmentEnd > start && isWhiteSpace(static_cast<unsigned char>(text[segmentEnd - 1]))) --segmentEnd;
    flush(segmentEnd);
    ids.push_back(addedId);
    pos += length;
    start = pos;
  }
  flush(text.size());
  if (addSpecial) ids.insert(ids.end(), spec_.suffix.begin(), spec_.suffix.end());
  return {};
}

std::string Tokenizer::decode(const std::vector<int>& ids, std::string& text) const {
  text.clear();
  std::string segment;
  bool atStart = true;  // no added token yet: the ordinary run being collected starts the text
  auto flush = [&] {
    if (!segment.empty()) finishSegment(segment, atStart);
    text += segment;
    segment.clear();
  };
  for (size_t i = 0; i < ids.size(); ++i) {
    const int id = ids[i];
    if (id < 0 || id >= vocabSize() || tokens_[id].empty())
      return "token id " + std::to_string(id) + " (position " + std::to_string(i) + ") is not in the vocabulary of " +
             std::to_string(vocabSize()) + " tokens";
    if (!isAdded(id)) {
      appendBytes(id, segment);
      continue;
    }
    flush();
    text += tokens_[id];
    atStart = false;
  }
  flush();
  return {};
}

std::string Tokenizer::tokenBytes(int id) const {
  if (id < 0 || id >= vocabSize()) return {};
  if (isAdded(id)) return tokens_[id];
  std::string out;
  appendBytes(id, out);
  return out;
}

std::string Tokenizer::displayToken(int id) const {
  if (isAdded(id)) return tokens_.at(id);
  const std::string bytes = tokenBytes(id);
  std::string out;
  for (size_t pos = 0; pos < bytes.size();) {
    const int length = utf8CodePointLength(bytes, pos);
    if (length == 0) {
      out += byteTokenName(bytes[pos++]);
      continue;
    }
    const char c = bytes[pos];
    if (c == ' ') out += "\u2423";
    else if (c == '\n') out += "\u21B5";
    else if (c == '\t') out += "\u21E5";
    else if (c == '\r') out += "\\r";
    else out.append(bytes, pos, length);
    pos += length;
  }
  return out;
}

}  // namespace attnlab
