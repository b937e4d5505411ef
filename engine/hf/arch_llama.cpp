// model_type "llama" (Llama 2/3.x, TinyLlama, SmolLM) and "qwen2" (the same with q/k/v biases):
// RMSNorm, SwiGLU, RoPE in the rotate-half layout (rows of q_proj/k_proj permuted, see
// architecture.h) with rope_theta and rope_scaling (linear, llama3), grouped KV heads.
#include "hf/architecture.h"

namespace attnlab::hf {
namespace {

// Reads rope_scaling into the rope settings. Returns "" or the reason.
std::string ropeScaling(const Json& j, Settings& s) {
  if (!j.contains("rope_scaling") || j["rope_scaling"].is_null()) return {};
  const Json& r = j["rope_scaling"];
  if (!r.is_object()) return "rope_scaling must be an object";
  ConfigReader read(r);
  const std::string type = read.text("rope_type", read.text("type", "default"));
  if (type == "default") return read.error();
  const double factor = read.number("factor", 1.0);
  if (!(factor >= 1)) return "rope_scaling.factor must be at least 1";
  if (type == "linear") {
    s["linear_scale"] = factor;
  } else if (type == "llama3") {
    s["llama3_factor"] = factor;
    s["llama3_low_freq_factor"] = read.number("low_freq_factor", 1.0);
    s["llama3_high_freq_factor"] = read.number("high_freq_factor", 4.0);
    s["llama3_original_context"] = read.positiveOr("original_max_position_embeddings", 8192);
  } else {
    return "rope_scaling type \"" + type + "\" is not supported (linear, llama3)";
  }
  return read.error();
}

class Llama : public Architecture {
 public:
  explicit Llama(bool qwen) : qwen_(qwen) {}

  std::string configure(const Json& j, ModelConfig& c) const override {
    ConfigReader r(j);
    c.vocab = r.positive("vocab_size");
    c.d_model = r.positive("hidden_size");
    c.n_layers = r.positive("num_hidden_layers");
    c.n_heads = r.positive("num_attention_heads");
    c.n_kv_heads = r.positiveOr("num_key_value_heads", c.n_heads);
    c.d_ff = r.positive("intermediate_size");
    c.context = r.positiveOr("max_position_embeddings", 2048);
    if (c.d_model % c.n_heads == 0 && r.positiveOr("head_dim", c.d_model / c.n_heads) != c.d_model / c.n_heads)
      r.fail("head_dim other than hidden_size / num_attention_heads is not supported");
    c.norm = "rmsnorm";
    c.norm_eps = r.number("rms_norm_eps", 1e-6);
    c.mlp = "swiglu";
    if (const std::string act = r.text("hidden_act", "silu"); act != "silu") r.fail("hidden_act \"" + act + "\" is not supported (silu)");
    c.mlp_bias = r.flag("mlp_bias", false);
    c.qkv_bias = qwen_ || r.flag("attention_bias", false);
    c.out_bias = !qwen_ && r.flag("attention_bias", false);
    if (qwen_ && r.flag("use_sliding_window", false)) r.fail("use_sliding_window = true is not supported");
    c.tied_embeddings = r.flag("tie_word_embeddings", false);
    c.positional = "rope";
    c.positional_settings["theta"] = r.number("rope_theta", 10000.0);
    if (std::string why = ropeScaling(j, c.positional_settings); !why.empty()) r.fail(why);
    return r.error();
  }

  std::string plan(const ModelConfig& c, const std::set<std::string>&, std::vector<WeightSource>& out) const override {
    const int64_t d = c.d_model, ff = c.d_ff, dh = c.headDim(), H = c.n_heads, Hkv = c.kvHeads();
    const auto qOrder = rotaryOrder(c.n_heads, c.headDim(), c.headDim()), kOrder = rotaryOrder(c.kvHeads(), c.headDim(), c.headDim());
    auto add = [&](std::string param, std::string tensor, std::vector<int64_t> shape, std::function<void(const Mat&, Mat&)> f) {
      out.push_back({std::move(param), std::move(tensor), std::move(shape), std::move(f)});
    };
    add("tok_emb.weight", "model.embed_tokens.weight", {c.vocab, d}, copyAs);
    for (int l = 0; l < c.n_layers; ++l) {
      const std::string e = "blocks." + std::to_string(l) + ".", h = "model.layers." + std::to_string(l) + ".";
      add(e + "ln1.weight", h + "input_layernorm.weight", {d}, copyAs);
      add(e + "attn.wq.weight", h + "self_attn.q_proj.weight", {H * dh, d}, pickRows(qOrder));
      add(e + "attn.wk.weight", h + "self_attn.k_proj.weight", {Hkv * dh, d}, pickRows(kOrder));
      add(e + "attn.wv.weight", h + "self_attn.v_proj.weight", {Hkv * dh, d}, copyAs);
      add(e + "attn.wo.weight", h + "self_attn.o_proj.weight", {d, H * dh}, copyAs);
      if (c.qkv_bias) {
        add(e + "attn.wq.bias", h + "self_attn.q_proj.bias", {H * dh}, pickCols(qOrder));
        add(e + "attn.wk.bias", h + "self_attn.k_proj.bias", {Hkv * dh}, pickCols(kOrder));
        add(e + "attn.wv.bias", h + "self_attn.v_proj.bias", {Hkv * dh}, copyAs);
      }
      if (c.out_bias) add(e + "attn.wo.bias", h + "self_attn.o_proj.bias", {d}, copyAs);
      add(e + "ln2.weight", h + "post_attention_layernorm.weight", {d}, copyAs);
      for (auto [mine, theirs] : {std::pair{"fc", "up_proj"}, {"gate", "gate_proj"}}) {
        add(e + "mlp." + mine + ".weight", h + "mlp." + theirs + ".weight", {ff, d}, copyAs);
        if (c.mlp_bias) add(e + "mlp." + mine + ".bias", h + "mlp." + theirs + ".bias", {ff}, copyAs);
      }
      add(e + "mlp.proj.weight", h + "mlp.down_proj.weight", {d, ff}, copyAs);
      if (c.mlp_bias) add(e + "mlp.proj.bias", h + "mlp.down_proj.bias", {d}, copyAs);
    }
    add("ln_f.weight", "model.norm.weight", {d}, copyAs);
    if (!c.tied_embeddings) add("head.weight", "lm_head.weight", {c.vocab, d}, copyAs);
    return {};
  }

  bool ignorable(const std::string& name, const ModelConfig& c) const override {
    return name.find("rotary_emb.inv_freq") != std::string::npos || (c.tied_embeddings && name == "lm_head.weight");
  }

 private:
  bool qwen_;
};

ATTNLAB_REGISTER(ArchitectureRegistry, "llama", "Llama: RMSNorm, SwiGLU, rotate-half RoPE (linear/llama3 scaling), grouped KV heads",
                 [] { return std::make_unique<Llama>(false); });
ATTNLAB_REGISTER(ArchitectureRegistry, "qwen2", "Qwen2: as llama, with q/k/v biases",
                 [] { return std::make_unique<Llama>(true); });

}  // namespace
}  // namespace attnlab::hf
