#include "workloads.h"

#include "core/settings.h"
#include "io/config_json.h"

namespace attnlab::bench {

const std::vector<Workload>& workloads() {
  static const std::vector<Workload> all = {
      {"default", "default preset: d_model 128, 4 layers, 4 heads, context 128, softmax, learned positions", {}},
      {"larger", "d_model 256, 6 layers, 8 heads, d_ff 1024, context 256, softmax, learned positions",
       {"model.d_model=256", "model.n_layers=6", "model.n_heads=8", "model.d_ff=1024", "model.context=256"}},
      {"sigmoid_rope", "default shape with sigmoid attention (b = -log(i+1)) and RoPE",
       {"model.attention=sigmoid", "model.positional=rope"}},
      // Long contexts, where T x T maps dominate memory: attnlab trains softmax without them.
      {"long_1024", "d_model 256, 4 layers, 8 heads, d_ff 1024, context 1,024, batch 4, softmax, learned positions",
       {"model.d_model=256", "model.n_layers=4", "model.n_heads=8", "model.d_ff=1024", "model.context=1024", "train.batch=4"}},
      {"long_2048", "d_model 256, 4 layers, 8 heads, d_ff 1024, context 2,048, batch 4, softmax, learned positions",
       {"model.d_model=256", "model.n_layers=4", "model.n_heads=8", "model.d_ff=1024", "model.context=2048", "train.batch=4"}},
  };
  return all;
}

std::string workloadConfig(const std::string& name, ExperimentConfig& config) {
  for (const Workload& w : workloads()) {
    if (w.name != name) continue;
    if (std::string why = loadPreset("default", config); !why.empty()) return why;
    for (const std::string& o : w.overrides)
      if (std::string why = applyOverride(config, o); !why.empty()) return why;
    return validate(config);
  }
  std::string known;
  for (const Workload& w : workloads()) known += (known.empty() ? "" : ", ") + w.name;
  return "unknown workload '" + name + "' (known: " + known + ")";
}

nlohmann::json describe(const std::string& name, const ExperimentConfig& config, int seqLen) {
  const ModelConfig& m = config.model;
  const TrainConfig& t = config.train;
  return {{"name", name},
          {"vocab", m.vocab},
          {"d_model", m.d_model},
          {"n_layers", m.n_layers},
          {"n_heads", m.n_heads},
          {"d_ff", m.d_ff},
          {"context", m.context},
          {"seq_len", seqLen},
          {"probe_len", seqLen},
          {"batch", t.batch},
          {"attention", m.attentionOf(0)},
          {"temperature", settingOr(m.attention_settings, {"temperature", 1.0, 0, 0, false, ""})},
          {"positional", m.positional},
          {"rope_theta", settingOr(m.positional_settings, {"theta", 10000.0, 0, 0, false, ""})},
          {"tied_embeddings", m.tied_embeddings},
          {"lr", t.lr},
          {"beta1", t.beta1},
          {"beta2", t.beta2},
          {"eps", t.eps},
          {"weight_decay", t.weight_decay},
          {"grad_clip", t.grad_clip}};
}

}  // namespace attnlab::bench
