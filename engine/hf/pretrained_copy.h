#pragma once
// What describes a Hugging Face model folder apart from its weights: config.json, the tokenizer's
// files, and the names and dtype of its stored tensors (the export back writes the same names).
// A checkpoint fine-tuned from such a folder keeps a copy in its own `pretrained/` folder, so it
// opens, tokenizes and exports back after the source folder is gone.
#include <string>

#include "hf/hf_model.h"

namespace attnlab::hf {

// The folder inside a checkpoint that holds the copy; the saved config's task.tokenizer names it.
inline constexpr const char* kPretrainedFolder = "pretrained";

// Copies config.json (which must exist) and whichever tokenizer files exist from `fromDir` into
// `toDir` (created); a file that already is the same file is left alone. "" or a one-line reason.
std::string copyDescriptionFiles(const std::string& fromDir, const std::string& toDir);

// copyDescriptionFiles, and tensors.json: the tensor names and dtype of `fromDir`'s weights (or of
// its own tensors.json when `fromDir` is itself such a copy). "" or a one-line reason.
std::string keepPretrainedDescription(const std::string& fromDir, const std::string& toDir);

// readHfInfo for a model folder or a kept copy (which has tensors.json instead of weights).
std::string readPretrainedDescription(const std::string& dir, HfModelInfo& info);

}  // namespace attnlab::hf
