#pragma once
// Passkey prompts (Mohtashami & Jaggi 2023) in a tokenizer's own vocabulary, so that the retrieval
// study (retrieval_heads.h) runs on a model without a task of its own (a Hugging Face folder):
//   [BOS] filler ... " The pass key is 71432. Remember it." ... filler " What is the pass key? The pass key is 71432"
// The needle sits at a depth that steps evenly through the prompts; the five-digit key is drawn from
// `seed`. Every prompt is exactly `length` inputs; targets are set only where the next token is one
// of the key's, and those are the needle's key tokens: each piece is encoded on its own, so the key
// tokenizes the same in both places.
#include <cstdint>
#include <vector>

#include "data/task.h"

namespace attnlab {

class Tokenizer;

struct PasskeyPromptOptions {
  int length = 256;     // inputs per prompt
  int batches = 1;
  int batch_size = 4;   // prompts per batch
  uint64_t seed = 1;
};

// Throws std::invalid_argument with a one-line reason: `length` beyond `context` or too short for
// the needle and question, or a token id beyond the model's `vocabRows` embedding rows.
std::vector<Batch> passkeyPrompts(const Tokenizer& tokenizer, int vocabRows, int context, const PasskeyPromptOptions& options);

// The length used when none is asked for: 256 tokens, or the whole context when it is shorter.
int defaultPasskeyLength(int context);

}  // namespace attnlab
