#pragma once
// QK-guard (after the QK-Guard paper on bf16 collapse): train.qk_guard = a score threshold (0: off).
// Every training step records each layer's largest |s_ij| over the batch; a softmax layer whose largest
// score first exceeds the threshold runs qk_norm (s_ij = tau_h q_i/|q_i| . k_j/|k_j|, so |s_ij| <=
// tau_h) from the next step on, with tau_h starting at the threshold: the cap is the score the user
// called safe, so the switched map may stay as sharp as that allows but no sharper (sqrt(d_head) would
// blunt it at once). The switch lives in model.attention, so checkpoints keep it.
#include <string>
#include <vector>

#include "config/model_config.h"
#include "config/train_config.h"
#include "model/model.h"
#include "train/optimizer.h"
#include "train/trainer.h"

namespace attnlab {

struct Workspace;

// Per layer, the largest finite |s_ij| (j <= i) of the last forward's scores on `ws`, over the whole batch.
std::vector<double> layerMaxScores(const Workspace& ws);
// The layers the guard switches after a step whose largest scores were `maxScores`: softmax layers above `threshold`.
std::vector<int> layersCrossing(const ModelConfig& config, const std::vector<double>& maxScores, double threshold);
// The configuration with `layers` running qk_norm (model.attention becomes one name per layer).
ModelConfig withQkNorm(const ModelConfig& config, const std::vector<int>& layers);
// `model` rebuilt as `config` (withQkNorm), every switched layer's tau_h set to `tau`, and
// `optimizer`'s moments carried over by parameter name (zero for the new tau_h). Returns the new
// model and replaces `optimizer` by one bound to it.
std::unique_ptr<Model> switchToQkNorm(const Model& model, const ModelConfig& config, const std::vector<int>& layers, float tau,
                                      const TrainConfig& train, std::unique_ptr<AdamW>& optimizer);
// The largest score of `layer` at the step `point` switched it (NaN where a read history lacks it).
double switchScore(const TrainPoint& point, int layer);
// "layer 2 at step 40 (largest score 52.3 > 50): qk_norm from step 41", the line shown to the user:
// `layer` counts from 0 as everywhere in the engine, the message from 1 as the views and charts do.
std::string qkGuardMessage(int step, int layer, double score, double threshold);

}  // namespace attnlab
