// model_type "gpt2" (GPT-2 small to xl, distilgpt2): learned positions, pre-LayerNorm blocks,
// Conv1D weights stored [in, out] with q, k, v side by side in c_attn, gelu_new, tied head.
// Tensors are named with or without the "transformer." prefix.
#include <numeric>

#include "hf/architecture.h"

namespace attnlab::hf {
namespace {

bool endsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::vector<int> range(int first, int count) {
  std::vector<int> r(count);
  std::iota(r.begin(), r.end(), first);
  return r;
}

class Gpt2 : public Architecture {
 public:
  std::string configure(const Json& j, ModelConfig& c) const override {
    ConfigReader r(j);
    c.vocab = r.positive("vocab_size");
    c.d_model = r.positive("n_embd");
    c.n_layers = r.positive("n_layer");
    c.n_heads = r.positive("n_head");
    c.context = r.positiveOr("n_positions", r.positiveOr("n_ctx", 1024));
    c.d_ff = r.positiveOr("n_inner", fourTimes(c.d_model));
    c.norm = "layernorm";
    c.norm_eps = r.number("layer_norm_epsilon", 1e-5);
    const std::string act = r.text("activation_function", "gelu_new");
    if (act == "gelu_new" || act == "gelu_pytorch_tanh") c.mlp = "gelu";
    else if (act == "gelu") c.mlp = "gelu_erf";
    else r.fail("activation_function \"" + act + "\" is not supported (gelu_new, gelu_pytorch_tanh, gelu)");
    if (r.flag("scale_attn_by_inverse_layer_idx", false)) r.fail("scale_attn_by_inverse_layer_idx = true is not supported");
    if (!r.flag("scale_attn_weights", true)) r.fail("scale_attn_weights = false is not supported");
    c.tied_embeddings = r.flag("tie_word_embeddings", true);
    c.mlp_bias = c.qkv_bias = c.out_bias = true;
    c.positional = "learned";
    return r.error();
  }

  std::string plan(const ModelConfig& c, const std::set<std::string>& names, std::vector<WeightSource>& out) const override {
    const std::string p = names.count("transformer.wte.weight") ? "transformer." : "";
    const int64_t d = c.d_model, ff = c.d_ff;
    auto add = [&](std::string param, std::string tensor, std::vector<int64_t> shape, std::function<void(const Mat&, Mat&)> f) {
      out.push_back({std::move(param), p + tensor, std::move(shape), std::move(f)});
    };
    add("tok_emb.weight", "wte.weight", {c.vocab, d}, copyAs);
    add("pos_emb.weight", "wpe.weight", {c.context, d}, copyAs);
    for (int l = 0; l < c.n_layers; ++l) {
      const std::string e = "blocks." + std::to_string(l) + ".", h = "h." + std::to_string(l) + ".";
      for (auto [mine, theirs] : {std::pair{"ln1", "ln_1"}, {"ln2", "ln_2"}}) {
        add(e + mine + ".weight", h + theirs + ".weight", {d}, copyAs);
        add(e + mine + ".bias", h + theirs + ".bias", {d}, copyAs);
      }
      const char* roles[] = {"wq", "wk", "wv"};  // c_attn's output columns: q | k | v
      for (int i = 0; i < 3; ++i) {
        std::vector<int> cols = range(i * static_cast<int>(d), static_cast<int>(d));
        add(e + "attn." + roles[i] + ".weight", h + "attn.c_attn.weight", {d, 3 * d}, [cols](const Mat& s, Mat& v) {
          for (size_t k = 0; k < cols.size(); ++k) v.row(static_cast<Eigen::Index>(k)) = s.col(cols[k]).transpose();
        });
        add(e + "attn." + roles[i] + ".bias", h + "attn.c_attn.bias", {3 * d}, pickCols(cols));
      }
      add(e + "attn.wo.weight", h + "attn.c_proj.weight", {d, d}, transposed);
      add(e + "attn.wo.bias", h + "attn.c_proj.bias", {d}, copyAs);
      add(e + "mlp.fc.weight", h + "mlp.c_fc.weight", {d, ff}, transposed);
      add(e + "mlp.fc.bias", h + "mlp.c_fc.bias", {ff}, copyAs);
      add(e + "mlp.proj.weight", h + "mlp.c_proj.weight", {ff, d}, transposed);
      add(e + "mlp.proj.bias", h + "mlp.c_proj.bias", {d}, copyAs);
    }
    add("ln_f.weight", "ln_f.weight", {d}, copyAs);
    add("ln_f.bias", "ln_f.bias", {d}, copyAs);
    if (!c.tied_embeddings) out.push_back({"head.weight", "lm_head.weight", {c.vocab, d}, copyAs});
    return {};
  }

  bool ignorable(const std::string& name, const ModelConfig& c) const override {
    return endsWith(name, ".attn.bias") || endsWith(name, ".attn.masked_bias") || (c.tied_embeddings && name == "lm_head.weight");
  }
};

ATTNLAB_REGISTER(ArchitectureRegistry, "gpt2", "GPT-2: learned positions, LayerNorm, gelu_new, Conv1D weights, tied head",
                 [] { return std::make_unique<Gpt2>(); });

}  // namespace
}  // namespace attnlab::hf
