#include "train/memory_estimate.h"

#include <exception>
#include <memory>

#include "core/available_memory.h"
#include "data/task.h"
#include "model/model.h"
#include "train/trainer.h"

namespace attnlab {

double trainingFlopsPerToken(const ModelConfig& model, double parameters, int sequenceLength) {
  return 6 * parameters + 6.0 * model.n_layers * sequenceLength * model.d_model;
}

double trainingFlopsPerStep(const ExperimentConfig& config, const MemoryEstimate& e) {
  const double tokens = double(config.train.batch) * e.sequenceLength;
  return trainingFlopsPerToken(config.model, double(e.parameters), e.sequenceLength) * tokens;
}

std::string estimateMemory(const ExperimentConfig& config, MemoryEstimate& out, ThisMachine machine) {
  if (std::string why = validate(config); !why.empty()) return why;
  std::string error;
  const std::unique_ptr<Task> task = makeTask(config.task, error);
  if (!task) return error;
  return estimateMemory(config, *task, out, machine);
}

std::string estimateMemory(const ExperimentConfig& config, const Task& task, MemoryEstimate& out, ThisMachine machine) {
  ModelConfig m = config.model;
  if (m.vocab == 0) m.vocab = task.vocabulary().size();
  if (std::string why = estimateTraining(m, config.train.batch, trainingSequenceLength(config, task), out); !why.empty()) return why;
  if (machine == ThisMachine::mustFit) return trainingMemoryRefusal(out, availableMemoryBytes());
  return {};
}

std::string estimateTraining(const ModelConfig& model, int batch, int sequenceLength, MemoryEstimate& out) {
  MemoryEstimate e;
  e.batch = batch;
  e.sequenceLength = sequenceLength;
  try {
    const std::unique_ptr<const Model> shapes = Model::shapesOf(model);
    e.parameters = shapes->params().totalElements();
    e.activationBytes = shapes->activationBytes(e.batch, e.sequenceLength, ActivationPass::training);
  } catch (const std::exception& ex) {
    return ex.what();
  }
  e.parameterBytes = e.parameters * sizeof(float) * 2;
  e.optimizerBytes = e.parameters * sizeof(float) * 2;
  out = e;
  return {};
}

std::string trainingMemoryRefusal(const MemoryEstimate& e, uint64_t available) {
  if (e.totalBytes() <= double(available)) return {};
  return "this experiment needs about " + memoryText(e.totalBytes()) + " to train (weights, gradients and AdamW moments " +
         memoryText(double(e.parameterBytes) + double(e.optimizerBytes)) + ", activations " +
         memoryText(double(e.activationBytes)) + " at batch " + std::to_string(e.batch) + " x context " +
         std::to_string(e.sequenceLength) + "); " + memoryText(double(available)) +
         " is available: make train.batch, model.context or the model smaller";
}

std::string activationMemoryRefusal(const MemoryEstimate& e, uint64_t available) {
  if (double(e.activationBytes) <= double(available)) return {};
  return "training on needs about " + memoryText(double(e.activationBytes)) + " more for the activations at batch " +
         std::to_string(e.batch) + " x context " + std::to_string(e.sequenceLength) +
         " (the weights, gradients and AdamW moments are in memory already); " + memoryText(double(available)) +
         " is available: make train.batch or task.seq_len smaller";
}

std::string estimateInference(const ModelConfig& model, int tokens, bool holdsTrainingState, InferenceEstimate& out) {
  InferenceEstimate e;
  e.tokens = tokens;
  try {
    const std::unique_ptr<const Model> shapes = Model::shapesOf(model);
    e.parameters = shapes->params().totalElements();
    e.activationBytes = double(shapes->activationBytes(1, tokens));
  } catch (const std::exception& ex) {
    return ex.what();
  }
  e.weightBytes = double(e.parameters) * sizeof(float);
  e.heldStateBytes = holdsTrainingState ? 3 * e.weightBytes : 0;  // gradients, AdamW's m and v
  // Keys and values of every layer for one sequence (an upper bound where layers share them).
  e.kvCacheBytes = 2.0 * model.n_layers * model.kvHeads() * model.headDim() * double(tokens) * sizeof(float);
  out = e;
  return {};
}

std::string inferenceMemoryRefusal(const std::string& what, const InferenceEstimate& e, uint64_t available) {
  if (e.totalBytes() <= double(available)) return {};
  return what + " needs about " + memoryText(e.totalBytes()) + " (weights " + memoryText(e.weightBytes) +
         (e.heldStateBytes > 0 ? ", their gradients and AdamW moments " + memoryText(e.heldStateBytes) : std::string()) +
         ", KV cache " + memoryText(e.kvCacheBytes) + " and one forward's activations " + memoryText(e.activationBytes) +
         " at " + std::to_string(e.tokens) + " tokens); " + memoryText(double(available)) + " is available";
}

}  // namespace attnlab
