#pragma once
// What an experiment will need in memory, shown before training starts and checked against what
// this machine has available before anything is allocated.
#include <cstddef>
#include <cstdint>
#include <string>

#include "experiment/experiment_config.h"

namespace attnlab {

class Task;

struct MemoryEstimate {
  size_t parameters = 0;       // trainable numbers
  size_t parameterBytes = 0;   // float32 values and their gradients
  size_t optimizerBytes = 0;   // AdamW's two moments per parameter
  size_t activationBytes = 0;  // one forward and backward at [batch, sequence length] (Model::activationBytes)
  int batch = 0;
  int sequenceLength = 0;
  // In double: each part is below 2^64, their sum need not be.
  double totalBytes() const { return double(parameterBytes) + double(optimizerBytes) + double(activationBytes); }
};

// Whether the estimate also refuses an experiment that needs more than this machine has available
// (training here), or not (planning a run for other machines).
enum class ThisMachine { mustFit, mayNotFit };

// Returns "" and fills `out`, or the one-line reason the configuration cannot be trained. Counts
// the model's parameter shapes without allocating them (Model::shapesOf), so it is exact and
// cheap for any size. With mustFit, an estimate above availableMemoryBytes() is refused with
// trainingMemoryRefusal's figures.
std::string estimateMemory(const ExperimentConfig& config, MemoryEstimate& out, ThisMachine machine = ThisMachine::mustFit);
// The same for a config whose task is built already (model.vocab may be 0: the task's is used).
std::string estimateMemory(const ExperimentConfig& config, const Task& task, MemoryEstimate& out, ThisMachine machine);

// What training `model` takes on batches [batch, sequenceLength], from its shapes (allocating
// nothing): the parts estimateMemory adds up. Returns "" or why the configuration cannot be built.
std::string estimateTraining(const ModelConfig& model, int batch, int sequenceLength, MemoryEstimate& out);

// Training FLOPs per token of a model with `parameters` numbers on sequences of `sequenceLength`:
// 6 per parameter (forward 2, backward 4) plus the attention products q.k and a.v, 2 x 2 x T x d
// per layer forward, halved by causality, times 3 for the backward.
double trainingFlopsPerToken(const ModelConfig& model, double parameters, int sequenceLength);
// One training step's: batch x sequence length tokens, from an estimate of `config`.
double trainingFlopsPerStep(const ExperimentConfig& config, const MemoryEstimate& estimate);

// "" when `e` fits in `available` bytes, else the one-line refusal with the figures, e.g. "this
// experiment needs about 412.3 GiB to train (weights, gradients and AdamW moments 1.2 GiB,
// activations 411.1 GiB at batch 16 x context 65536); 21.4 GiB is available".
std::string trainingMemoryRefusal(const MemoryEstimate& e, uint64_t available);

// "" when `e`'s activations fit in `available` bytes, else the refusal for training on a model that
// is in memory already (its weights, gradients and moments are allocated and not counted again).
std::string activationMemoryRefusal(const MemoryEstimate& e, uint64_t available);

// The tokens an opened model's estimate assumes (a lab checkpoint or a Hugging Face folder): its
// context, at most this many. Opening traces a probe, it does not decode the whole context (a model
// made for 131,072 tokens opens on 22 GiB).
constexpr int kOpeningTokens = 1024;

// What reading a model needs: its float32 weights, the keys and values of `tokens` tokens cached
// in every layer (decoding), and one forward's activations over them. An opened lab checkpoint is
// an experiment that can train on, so it also holds gradients and AdamW's moments (heldStateBytes).
struct InferenceEstimate {
  size_t parameters = 0;
  double weightBytes = 0;
  double heldStateBytes = 0;
  double kvCacheBytes = 0;
  double activationBytes = 0;
  int tokens = 0;
  double totalBytes() const { return weightBytes + heldStateBytes + kvCacheBytes + activationBytes; }
};

// Counts `model` at `tokens` tokens from its shapes, allocating nothing. Returns "" or why the
// configuration cannot be built.
std::string estimateInference(const ModelConfig& model, int tokens, bool holdsTrainingState, InferenceEstimate& out);

// "" when `e` fits in `available` bytes, else the one-line refusal naming `what` ("opening this
// checkpoint") and the figures.
std::string inferenceMemoryRefusal(const std::string& what, const InferenceEstimate& e, uint64_t available);

}  // namespace attnlab
