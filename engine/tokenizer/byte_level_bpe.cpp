// byte_level_bpe: GPT-2's scheme, also Llama 3, Qwen2 and SmolLM. The text is split by the
// pre-tokenizer steps (a split regex, optionally digits one by one), each piece's UTF-8 bytes
// become the 256 byte tokens, and the merges join them. Every byte has a token, so any text
// round-trips. Tokens spell bytes through GPT-2's printable byte alphabet (space is Ġ, U+0120).
#include <array>
#include <unordered_map>

#include "tokenizer/byte_alphabet.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode_classes.h"

namespace attnlab {
namespace {

class ByteLevelBpe : public Tokenizer {
 protected:
  std::string prepare() override {
    for (int b = 0; b < 256; ++b) {
      byteToId_[b] = id(encodeCodePoint(byteToCodePoint(static_cast<unsigned char>(b))));
      if (byteToId_[b] < 0)
        return spec_.source + ": the byte-level vocabulary has no token for byte " + hexByte(static_cast<char>(b));
    }
    return {};
  }

  void encodeSegment(std::string_view segment, bool, std::vector<int>& ids) const override {
    std::vector<std::string_view> pieces{segment}, split;
    for (const PreTokenizeStep& step : spec_.steps) {
      split.clear();
      for (std::string_view piece : pieces) {
        if (step.kind == PreTokenizeStep::Kind::Digits) splitDigits(piece, split);
        else splitByPattern(step.pattern, piece, split);
      }
      pieces.swap(split);
    }
    std::vector<int> symbols;
    for (std::string_view piece : pieces) {
      if (spec_.ignoreMerges) {
        const int whole = id(toByteAlphabet(piece));
        if (whole >= 0 && !isAdded(whole)) {
          ids.push_back(whole);
          continue;
        }
      }
      symbols.clear();
      for (char c : piece) symbols.push_back(byteToId_[static_cast<unsigned char>(c)]);
      merge(symbols);
      ids.insert(ids.end(), symbols.begin(), symbols.end());
    }
  }

  void appendBytes(int id, std::string& out) const override { out += fromByteAlphabet(token(id)); }

 private:
  std::array<int, 256> byteToId_{};
};

ATTNLAB_REGISTER(TokenizerRegistry, "byte_level_bpe",
                 "UTF-8 bytes as 256 base tokens, split by a regex, then BPE merges (GPT-2, Llama 3, Qwen2)",
                 [] { return std::make_unique<ByteLevelBpe>(); });

}  // namespace
}  // namespace attnlab
