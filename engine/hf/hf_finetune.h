#pragma once
// Fine-tuning an opened Hugging Face model: an experiment whose model is the opened one (its
// ModelConfig as the loader built it) and whose "text" task reads the user's file through the
// model's own tokenizer (TaskConfig::tokenizer names the model's folder). The trainer, checkpoint,
// views and analyses then work as for the lab's own models; a saved checkpoint keeps a copy of what
// describes the folder (hf/pretrained_copy.h), which its tokenizer and the export back read.
#include <memory>
#include <string>

#include "hf/hf_model.h"
#include "train/trainer.h"

namespace attnlab::hf {

// Defaults suited to a pretrained model: a small learning rate, a short warmup (a tenth of the
// steps), batches of 4 sequences of up to 128 tokens. Any of it may be overridden afterwards.
ExperimentConfig fineTuneExperiment(const HfModelInfo& info, const std::string& textPath, int steps);

// A trainer around `model` (moved in when this succeeds) for `config`. Refuses, with the figures,
// a run whose gradients, AdamW moments and activations do not fit in the free memory. Returns ""
// or a one-line reason (the text file, the tokenizer, the memory, the configuration); a refusal
// leaves `model` with the caller, except in the unlikely case that the trainer itself throws
// after taking it (then `model` is null).
std::string makeFineTuner(std::unique_ptr<Model>& model, const ExperimentConfig& config, std::unique_ptr<Trainer>& out);

// The folder a fine-tuned experiment's model came from (config.task.tokenizer), described as
// opening it would (no weights read), and checked to build the same model. "" or a reason.
std::string pretrainedOrigin(const ExperimentConfig& config, HfModelInfo& info);

}  // namespace attnlab::hf
