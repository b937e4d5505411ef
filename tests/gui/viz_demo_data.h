#pragma once
// Stand-ins for the analysis adapters, used only by the views' demo (viz_demo.cpp): the QK spectra
// (X1) and the joint query-key embedding (X4) of a trained model, computed directly from its
// weights and probe traces and put into the views' input structs. Standard projections ("qkv")
// only. The app will fill the same structs from engine/analysis instead.
#include <string>

#include "qk_embedding_model.h"
#include "spectrum_model.h"
#include "train/trainer.h"

namespace attnlab::demo {

// Every head of every layer of `model`, tagged with `step`.
SpectrumSnapshot spectraOf(const Model& model, int step);
// Circular-law radius s^2 sqrt(d_model d_head) and the eigenvalues of a freshly initialised model.
void setNull(const ModelConfig& config, uint64_t seed, SpectrumSeries& series);
// Queries and keys of (layer, head) over `sequences` validation sequences of the trainer's task.
QkEmbeddingData embeddingOf(const Trainer& trainer, int layer, int head, int sequences);

}  // namespace attnlab::demo
