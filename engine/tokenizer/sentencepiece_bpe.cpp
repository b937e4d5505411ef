// sentencepiece_bpe: the BPE of Llama 2 and TinyLlama as tokenizer.json writes it. Spaces become
// ▁ (U+2581) and a ▁ is prepended; the BPE runs over code points; a character without a token
// falls back to its UTF-8 bytes as <0xNN> tokens (or to the unknown token when there are none).
// Decoding maps ▁ back to a space and drops the prepended one.
#include <array>

#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode_classes.h"

namespace attnlab {
namespace {

const std::string kMetaspace = "\u2581";

class SentencePieceBpe : public Tokenizer {
 protected:
  std::string prepare() override {
    byteOf_.assign(vocabSize(), -1);
    if (spec_.byteFallback)
      for (int b = 0; b < 256; ++b) {
        byteIds_[b] = id(byteTokenName(static_cast<char>(b)));
        if (byteIds_[b] < 0)
          return spec_.source + ": byte_fallback is on but the vocabulary has no " + byteTokenName(static_cast<char>(b)) + " token";
        byteOf_[byteIds_[b]] = b;
      }
    if (!spec_.byteFallback && spec_.unk.empty())
      return spec_.source + ": a character without a token would have nowhere to go: the model needs byte_fallback or an unk_token";
    unkId_ = spec_.unk.empty() ? -1 : id(spec_.unk);
    if (!spec_.unk.empty() && unkId_ < 0) return spec_.source + ": the unknown token '" + spec_.unk + "' is not in the vocabulary";
    return {};
  }

  void encodeSegment(std::string_view segment, bool first, std::vector<int>& ids) const override {
    std::string text;
    for (char c : segment) text += c == ' ' ? kMetaspace : std::string(1, c);
    if (prepends(first) && !(spec_.prependIfMissing && text.rfind(kMetaspace, 0) == 0)) text.insert(0, kMetaspace);
    std::vector<std::string_view> pieces;
    splitPieces(text, pieces);
    std::vector<int> symbols;
    for (std::string_view piece : pieces) {
      symbols.clear();
      for (const CodePoint& cp : decodeCodePoints(piece)) appendSymbols(piece.substr(cp.offset, cp.length), symbols);
      merge(symbols);
      ids.insert(ids.end(), symbols.begin(), symbols.end());
    }
  }

  void appendBytes(int id, std::string& out) const override {
    if (byteOf_[id] >= 0) {
      out += static_cast<char>(byteOf_[id]);
      return;
    }
    const std::string& t = token(id);
    for (size_t pos = 0; pos < t.size();) {
      if (t.compare(pos, kMetaspace.size(), kMetaspace) == 0) {
        out += ' ';
        pos += kMetaspace.size();
      } else {
        out += t[pos++];
      }
    }
  }

  void finishSegment(std::string& segment, bool first) const override {
    if (prepends(first) && !segment.empty() && segment[0] == ' ') segment.erase(0, 1);
  }

 private:
  bool prepends(bool first) const {
    return spec_.prepend == PrependScheme::Always || (spec_.prepend == PrependScheme::First && first);
  }

  // With splitOnMetaspace each ▁ starts a piece (the Metaspace pre-tokenizer's split).
  void splitPieces(std::string_view text, std::vector<std::string_view>& pieces) const {
    if (!spec_.splitOnMetaspace) {
      pieces.push_back(text);
      return;
    }
    size_t start = 0;
    for (size_t pos = text.find(kMetaspace, 1); pos != std::string_view::npos; pos = text.find(kMetaspace, pos + 1)) {
      if (pos > start) pieces.push_back(text.substr(start, pos - start));
      start = pos;
    }
    pieces.push_back(text.substr(start));
  }

  void appendSymbols(std::string_view character, std::vector<int>& symbols) const {
    const int whole = id(std::string(character));
    if (whole >= 0 && !isAdded(whole)) {
      symbols.push_back(whole);
    } else if (spec_.byteFallback) {
      for (char c : character) symbols.push_back(byteIds_[static_cast<unsigned char>(c)]);
    } else if (unkId_ >= 0 && !(spec_.fuseUnk && !symbols.empty() && symbols.back() == unkId_)) {
      symbols.push_back(unkId_);
    }
  }

  std::array<int, 256> byteIds_{};
  std::vector<int> byteOf_;  // by token id: the byte a <0xNN> token stands for, else -1
  int unkId_ = -1;
};

ATTNLAB_REGISTER(TokenizerRegistry, "sentencepiece_bpe",
                 "spaces as \u2581, BPE over characters, <0xNN> byte fallback (Llama 2, TinyLlama)",
                 [] { return std::make_unique<SentencePieceBpe>(); });

}  // namespace
}  // namespace attnlab
