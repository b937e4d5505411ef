#pragma once
// Writing an opened (and perhaps fine-tuned) model back in the Hugging Face layout it came from:
// the source folder's config.json and tokenizer files, and model.safetensors in F32 with the
// source's tensor names.
// Each tensor is rebuilt by inverting the loader's conversions (hf/architecture.h), including
// the rotary row permutation; buffers the loader ignored (causal masks) are not written.
#include <string>

#include "hf/hf_model.h"

namespace attnlab::hf {

// Returns "" or a one-line reason. `outDir` is created; an existing model there is replaced.
std::string exportHfModel(const Model& model, const HfModelInfo& info, const std::string& outDir);

}  // namespace attnlab::hf
