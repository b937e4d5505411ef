#pragma once
// Evaluation at any sequence length (length extrapolation): the validation metrics of
// Trainer::evaluate on sequences of `seqLen` tokens, which may exceed the training length and
// the model's context. Defined in trainer.cpp beside Trainer::evaluate, which is this at the
// training length.
#include "train/trainer.h"

namespace attnlab {

// Throws ConfigError (one line) when the task cannot build `seqLen` tokens or the model's
// positions do not reach that far (a learned table beyond its context). Longer sequences run a
// few at a time, so the attention maps held at once stay those of a training batch.
EvalResult evaluateAtLength(Trainer& trainer, int seqLen, int batches = 0);
// The same for a model outside a trainer (a snapshot), trained on sequences of `trained` tokens.
EvalResult evaluateAtLength(const ExperimentConfig& config, const Task& task, const Model& model, int trained, int seqLen,
                            int batches = 0);

}  // namespace attnlab
