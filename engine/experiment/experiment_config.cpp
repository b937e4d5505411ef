#include "experiment/experiment_config.h"

#include <memory>
#include <sstream>

#include "attention/attention.h"
#include "data/task.h"
#include "model/block_parts.h"
#include "model/cross_layer_kv.h"
#include "model/gates.h"
#include "model/projection_sharing.h"
#include "positional/positional.h"

namespace attnlab {

namespace {
std::string positive(const char* key, double v) {
  return v > 0 ? std::string() : std::string(key) + " must be positive";
}
}  // namespace

std::string validate(const ExperimentConfig& config) {
  const ModelConfig& m = config.model;
  const TrainConfig& t = config.train;
  for (auto [key, v] : {std::pair{"model.d_model", m.d_model}, {"model.n_layers", m.n_layers}, {"model.n_heads", m.n_heads},
                        {"model.context", m.context}, {"train.batch", t.batch}, {"train.threads", t.threads}})
    if (auto why = positive(key, v); !why.empty()) return why;
  // 0 steps: a checkpoint kept as it is (a pretrained model saved without fine-tuning).
  if (t.steps < 0 || (t.steps == 0 && config.task.tokenizer.empty())) return "train.steps must be positive";
  if (!m.attention_only && m.d_ff <= 0) return "model.d_ff must be positive";
  if (m.d_model % m.n_heads != 0)
    return "model.n_heads (" + std::to_string(m.n_heads) + ") must divide model.d_model (" + std::to_string(m.d_model) + ")";
  if (m.n_kv_heads < 0 || m.n_heads % m.kvHeads() != 0)
    return "model.n_kv_heads (" + std::to_string(m.n_kv_heads) + ") must divide model.n_heads (" + std::to_string(m.n_heads) + ")";
  const bool pretrained = !config.task.tokenizer.empty();  // its sizes are its own; memory is checked instead
  if (!pretrained && (m.d_model > 4096 || m.n_layers > 64 || m.context > 8192 || m.n_heads > 256 || m.d_ff > 16384))
    return "model is larger than this lab supports (d_model <= 4096, n_layers <= 64, context <= 8192, d_ff <= 16384)";
  if (m.attention.empty() || (m.attention.size() != 1 && static_cast<int>(m.attention.size()) != m.n_layers))
    return "model.attention must name one variant or one per layer (" + std::to_string(m.n_layers) + ")";
  for (const auto& name : m.attention) {
    auto variant = AttentionRegistry::instance().create(name);
    if (!variant) return "unknown attention variant '" + name + "' (known: " + AttentionRegistry::instance().names() + ")";
    if (auto why = validateSettings(m.attention_settings, variant->settingSpecs(), name); !why.empty()) return why;
  }
  auto positional = PositionalRegistry::instance().create(m.positional);
  if (!positional)
    return "unknown positional encoding '" + m.positional + "' (known: " + PositionalRegistry::instance().names() + ")";
  if (auto why = validateSettings(m.positional_settings, positional->settingSpecs(), m.positional); !why.empty()) return why;
  if ((m.positional == "rope" || m.positional == "accumulated_rotation") && m.headDim() % 2 != 0)
    return m.positional + " needs an even head dimension (d_model / n_heads)";
  if (!projectionSharingOf(m.projection_sharing))
    return "model.projection_sharing '" + m.projection_sharing + "' is not available (known: " + kProjectionSharingNames + ")";
  if (auto why = validateLatentKv(m); !why.empty()) return why;
  if (auto why = validateCrossLayerKv(m); !why.empty()) return why;
  if (!outputGateKindOf(m.output_gate))
    return "model.output_gate '" + m.output_gate + "' is not available (known: " + kOutputGateNames + ")";
  if (!(m.retention_sparsity >= 0 && m.retention_sparsity <= 100)) return "model.retention_sparsity must be in [0, 100]";
  if (m.retention_sparsity > 0 && !m.retention_gate)
    return "model.retention_sparsity needs model.retention_gate = true (it penalises the gate's mean)";
  if (ScorePrecision p; !parseScorePrecision(m.score_precision, p))
    return "model.score_precision '" + m.score_precision + "' is not available (known: " + scorePrecisionNames() + ")";
  if (!isNormName(m.norm)) return "model.norm '" + m.norm + "' is not available (known: " + kNormNames + ")";
  if (!(m.norm_eps > 0 && m.norm_eps < 1)) return "model.norm_eps must be in (0, 1)";
  if (!isMlpName(m.mlp)) return "model.mlp '" + m.mlp + "' is not available (known: " + kMlpNames + ")";
  if (m.parallel_residual && m.attention_only) return "model.parallel_residual needs the MLP (model.attention_only is true)";
  if (auto why = validateTrainConfig(t, m.n_layers); !why.empty()) return why;
  std::string error;
  if (!makeTask(config.task, error)) return error;
  return {};
}

}  // namespace attnlab
