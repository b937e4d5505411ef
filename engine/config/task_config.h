#pragma once
// Which task trains the model and its settings (data/task.h makes the task from it).
#include <string>

#include "core/settings.h"

namespace attnlab {

struct TaskConfig {
  std::string name = "toy_language";
  Settings settings;      // task-specific (e.g. pairs, modulus, length_multiplier)
  std::string text_path;  // for the "text" task: a UTF-8 file, character level
  // For "text": a folder whose tokenizer files (tokenizer.json, or vocab.json + merges.txt) encode
  // the file, as fine-tuning a pretrained model needs (hf/hf_finetune.h). Such a model keeps its
  // own sizes: the lab's caps on the models it builds do not apply.
  std::string tokenizer;
  int seq_len = 0;        // 0 means the model's context
};

}  // namespace attnlab
