#include "interpret/passkey_prompts.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "core/random.h"
#include "tokenizer/tokenizer.h"

namespace attnlab {
namespace {

// The filler of the original passkey test: plain sentences that say nothing about the key.
const std::vector<std::string> kFiller = {"The grass is green.", "The sky is blue.", "The sun is yellow.", "Here we go.",
                                          "There and back again."};

class PieceEncoder {
 public:
  PieceEncoder(const Tokenizer& tokenizer, int vocabRows) : tokenizer_(tokenizer), vocabRows_(vocabRows) {}

  std::vector<int> operator()(const std::string& text) const {
    std::vector<int> ids;
    if (std::string why = tokenizer_.encode(text, ids); !why.empty()) throw std::invalid_argument("passkey prompt: " + why);
    for (int id : ids)
      if (id < 0 || id >= vocabRows_)
        throw std::invalid_argument("the tokenizer gives id " + std::to_string(id) + ", beyond the model's " + std::to_string(vocabRows_) +
                                    " embedding rows");
    return ids;
  }

 private:
  const Tokenizer& tokenizer_;
  int vocabRows_;
};

void append(std::vector<int>& to, const std::vector<int>& from) { to.insert(to.end(), from.begin(), from.end()); }

// `count` filler tokens (sentences in turn, the last one cut) and the offsets where sentences start.
std::vector<int> fillerTokens(const PieceEncoder& encode, int count, std::vector<int>& sentenceStarts) {
  std::vector<std::vector<int>> first, later;  // the first sentence of the prompt has no leading space
  for (const std::string& s : kFiller) {
    first.push_back(encode(s));
    later.push_back(encode(" " + s));
  }
  std::vector<int> tokens;
  sentenceStarts.clear();
  for (size_t i = 0; static_cast<int>(tokens.size()) < count; ++i) {
    sentenceStarts.push_back(static_cast<int>(tokens.size()));
    append(tokens, (i == 0 ? first : later)[i % kFiller.size()]);
  }
  if (sentenceStarts.empty()) sentenceStarts.push_back(0);
  tokens.resize(count);
  return tokens;
}

}  // namespace

int defaultPasskeyLength(int context) { return std::min(256, context); }

std::vector<Batch> passkeyPrompts(const Tokenizer& tokenizer, int vocabRows, int context, const PasskeyPromptOptions& o) {
  if (o.length > context)
    throw std::invalid_argument("a passkey prompt of " + std::to_string(o.length) + " tokens is longer than the model's context of " +
                                std::to_string(context));
  if (o.batches < 1 || o.batch_size < 1) throw std::invalid_argument("passkey prompts need at least one batch of one prompt");
  const PieceEncoder encode(tokenizer, vocabRows);
  const std::vector<int> needleHead = encode(" The pass key is"), needleTail = encode(". Remember it.");
  const std::vector<int> question = encode(" What is the pass key? The pass key is");
  const std::vector<int>& prefix = tokenizer.spec().prefix;  // BOS when the tokenizer's files ask for one
  const int prompts = o.batches * o.batch_size;
  Rng rng(o.seed);
  std::vector<Batch> out;
  for (int b = 0; b < o.batches; ++b) {
    Batch batch;
    batch.B = o.batch_size;
    batch.T = o.length;
    for (int p = 0; p < o.batch_size; ++p) {
      const std::vector<int> key = encode(" " + std::to_string(rng.uniformInt(10000, 99999)));
      // The inputs and the one token after them: the last input predicts the key's last token.
      const int total = o.length + 1;
      const int fixed = static_cast<int>(prefix.size() + needleHead.size() + 2 * key.size() + needleTail.size() + question.size());
      if (total - fixed < 0)
        throw std::invalid_argument("a passkey prompt needs at least " + std::to_string(fixed - 1) + " tokens in this vocabulary (asked for " +
                                    std::to_string(o.length) + ")");
      std::vector<int> starts;
      const std::vector<int> filler = fillerTokens(encode, total - fixed, starts);
      // Depth (p + 0.5) / prompts of the filler, at the sentence start at or before it.
      const double depth = (b * o.batch_size + p + 0.5) / prompts;
      const int at = *std::prev(std::upper_bound(starts.begin(), starts.end(), static_cast<int>(depth * filler.size())));
      std::vector<int> sequence = prefix;
      sequence.insert(sequence.end(), filler.begin(), filler.begin() + at);
      append(sequence, needleHead);
      append(sequence, key);
      append(sequence, needleTail);
      sequence.insert(sequence.end(), filler.begin() + at, filler.end());
      append(sequence, question);
      append(sequence, key);
      const int answerStart = total - static_cast<int>(key.size());
      for (int t = 0; t < o.length; ++t) {
        batch.inputs.push_back(sequence[t]);
        batch.targets.push_back(t + 1 >= answerStart ? sequence[t + 1] : -1);
      }
    }
    out.push_back(std::move(batch));
  }
  return out;
}

}  // namespace attnlab
