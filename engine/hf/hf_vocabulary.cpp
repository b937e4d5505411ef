#include "hf/hf_vocabulary.h"

#include "tokenizer/tokenizer_files.h"

namespace attnlab::hf {

Vocabulary hfVocabulary(const std::string& dir, int vocab, std::string& problem) {
  std::unique_ptr<Tokenizer> tokenizer = loadTokenizer(dir, problem);
  if (tokenizer && tokenizer->vocabSize() < vocab) {
    // Embedding rows beyond the tokenizer (padding, as Qwen2 has): ids without a token.
    TokenizerSpec padded = tokenizer->spec();
    padded.vocab.resize(vocab);
    tokenizer = makeTokenizer(padded, problem);
  }
  if (tokenizer) return Vocabulary(std::shared_ptr<const Tokenizer>(std::move(tokenizer)));
  std::vector<std::string> labels;
  labels.reserve(vocab);
  for (int i = 0; i < vocab; ++i) labels.push_back(std::to_string(i));
  return Vocabulary(std::move(labels), Vocabulary::Level::Word);
}

std::string encodeForModel(const Vocabulary& vocabulary, const std::string& text, int vocab, std::vector<int>& ids) {
  ids.clear();
  if (!vocabulary.tokenizer()) return "the model folder has no tokenizer (tokenizer.json, or vocab.json + merges.txt)";
  if (std::string why = vocabulary.tokenizer()->encode(text, ids, true); !why.empty()) return why;
  for (size_t i = 0; i < ids.size(); ++i)
    if (ids[i] >= vocab)
      return "token " + std::to_string(i + 1) + " (id " + std::to_string(ids[i]) + ") is beyond the model's " + std::to_string(vocab) +
             " embedding rows";
  if (ids.empty()) return "the text gives no tokens";
  return {};
}

}  // namespace attnlab::hf
