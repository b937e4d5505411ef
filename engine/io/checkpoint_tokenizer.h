#pragma once
// A checkpoint of a model trained on a learned BPE (task text, bpe_vocab) also holds that
// tokenizer, as a Hugging Face tokenizer.json, so that other tools and `attnlab-cli tokenize
// --model CHECKPOINT` read the same tokens.
#include <string>

#include "train/trainer.h"

namespace attnlab {

// Writes <folder>/tokenizer.json when the trainer's task uses a learned subword tokenizer (a
// pretrained model's own stays where task.tokenizer says); "" or a reason.
std::string writeCheckpointTokenizer(const std::string& folder, const Trainer& trainer);
// On loading, the task has learned its BPE again from the text file: it must equal the saved one
// (else the file changed since). "" or a one-line reason naming the file.
std::string checkCheckpointTokenizer(const std::string& folder, const Trainer& trainer);

}  // namespace attnlab
