#include "hf/hf_finetune.h"

#include <algorithm>
#include <cstdio>

#include "core/available_memory.h"
#include "data/task.h"
#include "hf/pretrained_copy.h"
#include "train/memory_estimate.h"

namespace attnlab::hf {

namespace {

constexpr int kBatch = 4;
constexpr int kSequence = 128;
constexpr double kLearningRate = 1e-4;

std::string megabytes(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f MB", bytes / 1e6);
  return text;
}

}  // namespace

ExperimentConfig fineTuneExperiment(const HfModelInfo& info, const std::string& textPath, int steps) {
  ExperimentConfig e;
  e.name = "finetune-" + info.model_type;
  e.description = "fine-tuned from " + info.dir;
  e.model = info.config;
  e.task.name = "text";
  e.task.text_path = textPath;
  e.task.tokenizer = info.dir;
  e.task.settings["vocab_rows"] = info.config.vocab;
  e.task.seq_len = std::min(info.config.context, kSequence);
  e.train.steps = steps;
  e.train.batch = kBatch;
  e.train.lr = kLearningRate;
  e.train.warmup = steps / 10;
  e.train.eval_every = 0;  // validation at the end
  e.train.eval_batches = 2;
  return e;
}

std::string makeFineTuner(std::unique_ptr<Model>& model, const ExperimentConfig& config, std::unique_ptr<Trainer>& out) {
  if (!model) return "no model to fine-tune";
  if (config.task.tokenizer.empty()) return "task.tokenizer must name the model's folder (its tokenizer encodes the text)";
  if (config.model != model->config())
    return "the experiment's model settings differ from the opened model's";
  const int seqLen = config.task.seq_len > 0 ? std::min(config.task.seq_len, config.model.context) : config.model.context;
  MemoryEstimate need;
  if (std::string why = estimateTraining(config.model, config.train.batch, seqLen, need); !why.empty()) return why;
  // The weights are in memory already; training adds the rest.
  const double extra = need.totalBytes() - double(need.parameters) * sizeof(float);
  const uint64_t free = availableMemoryBytes();
  if (free && extra > double(free))
    return "fine-tuning needs about " + megabytes(extra) + " more (gradients and AdamW's two moments of " +
           std::to_string(need.parameters) + " parameters, activations of " + std::to_string(config.train.batch) +
           " x " + std::to_string(seqLen) + " tokens) but only " + megabytes(double(free)) +
           " are free; use a smaller train.batch or task.seq_len";
  // What can be refused is checked before the model moves into a trainer, so that a refusal
  // leaves the model with the caller (the task reads the text once more inside the trainer).
  if (std::string why = validate(config); !why.empty()) return why;
  std::string error;
  const std::unique_ptr<Task> task = makeTask(config.task, error);
  if (!task) return error;
  if (task->vocabulary().size() != config.model.vocab)
    return "the tokenizer gives " + std::to_string(task->vocabulary().size()) + " ids but the model has " +
           std::to_string(config.model.vocab) + " embedding rows (task.settings.vocab_rows pads to them)";
  try {
    out = std::make_unique<Trainer>(config, std::move(model), std::vector<TrainPoint>{});
  } catch (const std::exception& e) {
    return e.what();
  }
  return {};
}

std::string pretrainedOrigin(const ExperimentConfig& config, HfModelInfo& info) {
  const std::string& dir = config.task.tokenizer;
  if (dir.empty()) return "the model was not fine-tuned from a Hugging Face folder (task.tokenizer is empty)";
  if (std::string why = readPretrainedDescription(dir, info); !why.empty()) return "task.tokenizer: " + why;
  if (info.config != config.model)
    return dir + ": its config.json no longer describes this model (changed since the fine-tuning?)";
  info.parameters = parameterCount(info.config);
  return {};
}

}  // namespace attnlab::hf
