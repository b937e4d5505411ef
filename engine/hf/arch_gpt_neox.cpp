// model_type "gpt_neox" (Pythia): LayerNorm with bias, fused query_key_value whose output rows are
// laid out per head as [H, 3, d_head], partial rotary (rotary_pct of each head, frequencies over
// the rotated span, rotate-half layout permuted as architecture.h says), parallel residual,
// untied embed_out, erf GELU.
#include <cmath>

#include "hf/architecture.h"

namespace attnlab::hf {
namespace {

bool endsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

class GptNeox : public Architecture {
 public:
  std::string configure(const Json& j, ModelConfig& c) const override {
    ConfigReader r(j);
    c.vocab = r.positive("vocab_size");
    c.d_model = r.positive("hidden_size");
    c.n_layers = r.positive("num_hidden_layers");
    c.n_heads = r.positive("num_attention_heads");
    c.d_ff = r.positiveOr("intermediate_size", fourTimes(c.d_model));
    c.context = r.positiveOr("max_position_embeddings", 2048);
    c.norm = "layernorm";
    c.norm_eps = r.number("layer_norm_eps", 1e-5);
    const std::string act = r.text("hidden_act", "gelu");
    if (act == "gelu") c.mlp = "gelu_erf";
    else if (act == "gelu_new" || act == "gelu_pytorch_tanh") c.mlp = "gelu";
    else r.fail("hidden_act \"" + act + "\" is not supported (gelu, gelu_new)");
    c.mlp_bias = true;
    c.qkv_bias = c.out_bias = r.flag("attention_bias", true);
    c.parallel_residual = r.flag("use_parallel_residual", true);
    c.tied_embeddings = r.flag("tie_word_embeddings", false);
    c.positional = "rope";
    const double pct = r.number("rotary_pct", r.number("partial_rotary_factor", 0.25));
    if (!(pct > 0 && pct <= 1)) r.fail("rotary_pct must be in (0, 1]");
    const int dh = c.n_heads > 0 ? c.d_model / c.n_heads : 0;
    const int rotated = static_cast<int>(dh * pct);  // as GPT-NeoX truncates it
    if (rotated % 2) r.fail("rotary_pct gives an odd rotated width (" + std::to_string(rotated) + ")");
    c.positional_settings["rotary_fraction"] = dh ? static_cast<double>(rotated) / dh : 0.0;
    c.positional_settings["span_rotary_only"] = 1;
    c.positional_settings["theta"] = r.number("rotary_emb_base", r.number("rope_theta", 10000.0));
    if (j.contains("rope_scaling") && !j["rope_scaling"].is_null()) r.fail("rope_scaling is not supported for gpt_neox");
    return r.error();
  }

  std::string plan(const ModelConfig& c, const std::set<std::string>&, std::vector<WeightSource>& out) const override {
    const int64_t d = c.d_model, ff = c.d_ff, dh = c.headDim(), H = c.n_heads;
    const int rotated = 2 * static_cast<int>(std::lround(c.positional_settings.at("rotary_fraction") * dh / 2.0));
    const std::vector<int> order = rotaryOrder(c.n_heads, c.headDim(), rotated);
    // Engine row i of role k (q 0, k 1, v 2) is fused row (head * 3 + k) * d_head + feature.
    auto fusedRows = [&](int role, bool rotary) {
      std::vector<int> rows;
      for (int i = 0; i < H * dh; ++i) {
        const int from = rotary ? order[i] : i;
        rows.push_back((from / static_cast<int>(dh) * 3 + role) * static_cast<int>(dh) + from % static_cast<int>(dh));
      }
      return rows;
    };
    auto add = [&](std::string param, std::string tensor, std::vector<int64_t> shape, std::function<void(const Mat&, Mat&)> f) {
      out.push_back({std::move(param), std::move(tensor), std::move(shape), std::move(f)});
    };
    add("tok_emb.weight", "gpt_neox.embed_in.weight", {c.vocab, d}, copyAs);
    for (int l = 0; l < c.n_layers; ++l) {
      const std::string e = "blocks." + std::to_string(l) + ".", h = "gpt_neox.layers." + std::to_string(l) + ".";
      for (auto [mine, theirs] : {std::pair{"ln1", "input_layernorm"}, {"ln2", "post_attention_layernorm"}}) {
        add(e + mine + ".weight", h + theirs + ".weight", {d}, copyAs);
        add(e + mine + ".bias", h + theirs + ".bias", {d}, copyAs);
      }
      const char* roles[] = {"wq", "wk", "wv"};
      for (int k = 0; k < 3; ++k) {
        const std::vector<int> rows = fusedRows(k, k < 2);
        add(e + "attn." + roles[k] + ".weight", h + "attention.query_key_value.weight", {3 * d, d}, pickRows(rows));
        if (c.qkv_bias) add(e + "attn." + roles[k] + ".bias", h + "attention.query_key_value.bias", {3 * d}, pickCols(rows));
      }
      add(e + "attn.wo.weight", h + "attention.dense.weight", {d, d}, copyAs);
      if (c.out_bias) add(e + "attn.wo.bias", h + "attention.dense.bias", {d}, copyAs);
      add(e + "mlp.fc.weight", h + "mlp.dense_h_to_4h.weight", {ff, d}, copyAs);
      add(e + "mlp.fc.bias", h + "mlp.dense_h_to_4h.bias", {ff}, copyAs);
      add(e + "mlp.proj.weight", h + "mlp.dense_4h_to_h.weight", {d, ff}, copyAs);
      add(e + "mlp.proj.bias", h + "mlp.dense_4h_to_h.bias", {d}, copyAs);
    }
    add("ln_f.weight", "gpt_neox.final_layer_norm.weight", {d}, copyAs);
    add("ln_f.bias", "gpt_neox.final_layer_norm.bias", {d}, copyAs);
    if (!c.tied_embeddings) add("head.weight", "embed_out.weight", {c.vocab, d}, copyAs);
    return {};
  }

  bool ignorable(const std::string& name, const ModelConfig& c) const override {
    return endsWith(name, ".attention.bias") || endsWith(name, ".attention.masked_bias") ||
           name.find("rotary_emb.inv_freq") != std::string::npos || (c.tied_embeddings && name == "embed_out.weight");
  }
};

ATTNLAB_REGISTER(ArchitectureRegistry, "gpt_neox", "GPT-NeoX / Pythia: parallel residual, partial rotary, fused per-head QKV",
                 [] { return std::make_unique<GptNeox>(); });

}  // namespace
}  // namespace attnlab::hf
