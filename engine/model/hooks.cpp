#include "model/hooks.h"

#include <array>

namespace attnlab {
namespace {

struct SiteInfo {
  HookSite site;
  const char* suffix;  // after "blocks.L."
  bool needsMlp;
  const char* description;
};

constexpr std::array<SiteInfo, 11> kBlockSites = {{
    {HookSite::resid_pre, "resid_pre", false, "[T, d_model] residual stream entering the block"},
    {HookSite::attn_q, "attn.q", false, "[H, T, d_head] queries after positional rotation"},
    {HookSite::attn_k, "attn.k", false, "[Hkv, T, d_head] keys after positional rotation"},
    {HookSite::attn_v, "attn.v", false, "[Hkv, T, d_head] values after the value gate and rotation"},
    {HookSite::attn_pattern, "attn.pattern", false, "[H, T, T] attention weights, one row per query"},
    {HookSite::attn_head_out, "attn.head_out", false, "[T, H, d_head] each head's output before W_O"},
    {HookSite::attn_out, "attn_out", false, "[T, d_model] the attention layer's output"},
    {HookSite::resid_mid, "resid_mid", true, "[T, d_model] residual stream between attention and MLP"},
    {HookSite::mlp_hidden, "mlp.hidden", true, "[T, d_ff] the MLP's activations"},
    {HookSite::mlp_out, "mlp.out", true, "[T, d_model] the MLP's output"},
    {HookSite::resid_post, "resid_post", false, "[T, d_model] residual stream leaving the block"},
}};
constexpr const char* kFinalNorm = "ln_f.out";

const SiteInfo* infoOf(HookSite site) {
  for (const auto& s : kBlockSites)
    if (s.site == site) return &s;
  return nullptr;
}

}  // namespace

std::string hookName(HookSite site, int layer) {
  if (site == HookSite::ln_f_out) return kFinalNorm;
  return "blocks." + std::to_string(layer) + "." + infoOf(site)->suffix;
}

bool parseHookName(const std::string& name, const ModelConfig& config, HookSite& site, int& layer) {
  if (name == kFinalNorm) {
    site = HookSite::ln_f_out;
    layer = -1;
    return true;
  }
  const std::string prefix = "blocks.";
  if (name.compare(0, prefix.size(), prefix) != 0) return false;
  const size_t dot = name.find('.', prefix.size());
  if (dot == std::string::npos || dot == prefix.size()) return false;
  const std::string digits = name.substr(prefix.size(), dot - prefix.size());
  if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 6) return false;
  layer = std::stoi(digits);
  if (layer >= config.n_layers) return false;
  const std::string suffix = name.substr(dot + 1);
  for (const auto& s : kBlockSites)
    if (suffix == s.suffix && !(s.needsMlp && config.attention_only)) {
      site = s.site;
      return true;
    }
  return false;
}

std::vector<std::string> hookNames(const ModelConfig& config) {
  std::vector<std::string> out;
  for (int l = 0; l < config.n_layers; ++l)
    for (const auto& s : kBlockSites)
      if (!(s.needsMlp && config.attention_only)) out.push_back(hookName(s.site, l));
  out.push_back(kFinalNorm);
  return out;
}

std::string hookDescription(HookSite site) {
  if (site == HookSite::ln_f_out) return "[T, d_model] the final norm's output, read by the unembedding";
  return infoOf(site)->description;
}

}  // namespace attnlab
