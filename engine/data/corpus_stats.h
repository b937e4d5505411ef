#pragma once
// Reference statistics of a task's data, to judge what a model has learned beyond them.
#include "core/random.h"
#include "data/task.h"

namespace attnlab {

// Entropy in nats per token of the unigram distribution of the targets of `samples` training
// sequences of `seqLen` tokens: the loss of a model that ignores all context.
double unigramEntropy(const Task& task, int samples, int seqLen, Rng& rng);

}  // namespace attnlab
