#pragma once
// The causal analyses' exact contracts as checks on any model (a lab model or an opened Hugging
// Face folder). Each returns "" when the contract holds, else what broke.
#include <cmath>
#include <string>
#include <vector>

#include "interpret/activation_hooks.h"
#include "interpret/activation_patching.h"
#include "interpret/direct_logit_attribution.h"
#include "interpret/head_composition.h"
#include "interpret/logit_lens.h"
#include "interpret/retrieval_heads.h"

namespace attnlab::testing {

inline std::string at(PatchSite site, const PatchEffect& e) {
  return "site " + std::to_string(static_cast<int>(site)) + " layer " + std::to_string(e.layer) + " head " + std::to_string(e.head) +
         " position " + std::to_string(e.position) + ": " + std::to_string(e.effect);
}

// Patching from a run identical to the corrupted one gives exactly 0 at every site; restoring the
// final residual at the last position, or as a whole, gives exactly 1.
inline std::string patchingContracts(const Model& model, const std::vector<int>& clean, const std::vector<int>& corrupt) {
  const bool mlp = !model.config().attention_only;
  for (PatchSite site : {PatchSite::resid, PatchSite::attn_out, PatchSite::mlp_out, PatchSite::head_out, PatchSite::pattern, PatchSite::values}) {
    if (site == PatchSite::mlp_out && !mlp) continue;
    PatchingRequest r;
    r.clean = clean;
    r.corrupt = corrupt;
    r.source = corrupt;
    r.site = site;
    for (bool perPosition : {false, true}) {
      r.perPosition = perPosition;
      const PatchingResult result = activationPatching(model, r);
      if (result.rows.empty()) return "no patching rows";
      for (const PatchEffect& e : result.rows)
        if (e.effect != 0.0) return "patching from the corrupted run itself, " + at(site, e);
    }
  }
  PatchingRequest r;
  r.clean = clean;
  r.corrupt = corrupt;
  const PatchingResult result = activationPatching(model, r);
  const int L = model.config().n_layers, T = static_cast<int>(clean.size());
  if (result.rows.size() != static_cast<size_t>((L + 1) * T)) return "residual sweep has " + std::to_string(result.rows.size()) + " rows";
  for (const PatchEffect& e : result.rows)
    if (e.layer == L && e.position == T - 1 && e.effect != 1.0) return "final residual at the last position, " + at(PatchSite::resid, e);
  ActivationRecorder source;
  runWithHooks(model, clean, &source);
  ActivationPatcher patcher(source, {Patch{HookSite::resid_post, L - 1, -1, {}}});
  const double ld = lastLogitDifference(model, corrupt, &patcher, result.answer, result.wrong);
  const double effect = (ld - result.corrupt_diff) / (result.clean_diff - result.corrupt_diff);
  if (effect != 1.0) return "the whole final residual restores " + std::to_string(effect);
  return {};
}

// The lens at the last layer is the model's logits, bit for bit.
inline std::string lensContract(const Model& model, const std::vector<int>& tokens) {
  const LogitLens lens = logitLens(model, tokens, 3);
  if (lens.logits.size() != static_cast<size_t>(model.config().n_layers + 1)) return "lens has the wrong number of layers";
  if (!(lens.logits.back().array() == runWithHooks(model, tokens, nullptr).array()).all()) return "the last lens layer differs from the logits";
  return {};
}

// The attribution's terms plus the embedding and bias terms sum to the logit (float64 sums of
// float32 activations: equal up to the float32 logit's rounding), at several tokens and positions.
inline std::string dlaContract(const Model& model, const std::vector<int>& tokens) {
  const Mat logits = runWithHooks(model, tokens, nullptr);
  for (int position : {-1, 1})
    for (int token : {-1, 0, 5}) {
      const DirectLogitAttribution d = directLogitAttribution(model, tokens, token, position);
      const int t = position < 0 ? static_cast<int>(tokens.size()) - 1 : position;
      if (d.logit != double(logits(t, d.token))) return "the attribution's logit is not the model's";
      double sum = 0;
      for (const DlaTerm& term : d.terms) sum += term.value;
      if (sum != d.sum) return "the reported sum is not the sum of the terms";
      if (std::abs(d.sum - d.logit) > 2e-5 * (1 + std::abs(d.logit)))
        return "terms sum to " + std::to_string(d.sum) + ", the logit is " + std::to_string(d.logit);
    }
  return {};
}

// Head 0.0 made to write only into dimensions [half, d) and head 1.0 (and its KV head) made to read
// only dimensions [0, half): 0.0's W_OV image lies in the kernel of 1.0's W_QK (and W_OV), so its
// Q-, K- and V-composition scores are exactly 0; the model is edited in place.
inline std::string compositionKernelContract(Model& model) {
  const ModelConfig& c = model.config();
  const int d = c.d_model, half = d / 2, dh = c.headDim();
  ParamStore& p = model.params();
  Param* wo = p.find("blocks.0.attn.wo.weight");
  if (!wo) return "no blocks.0.attn.wo.weight";
  wo->value.block(0, 0, half, dh).setZero();  // head 0's columns: nothing into [0, half)
  int found = 0;
  for (const char* name : {"wq.weight", "wk.weight", "wv.weight"})
    if (Param* w = p.find(std::string("blocks.1.attn.") + name)) {
      w->value.block(0, half, dh, d - half).setZero();  // head 0's rows (KV head 0): nothing read from [half, d)
      ++found;
    }
  if (found != 3) return "layer 1 has no separate q, k, v projections";
  for (const CompositionScore& s : headComposition(model).pairs)
    if (s.from_layer == 0 && s.from_head == 0 && s.to_layer == 1 && s.to_head == 0 && (s.q != 0.0 || s.k != 0.0 || s.v != 0.0))
      return "composition into the kernel scores q " + std::to_string(s.q) + " k " + std::to_string(s.k) + " v " + std::to_string(s.v);
  return {};
}

// Knocking out no heads and zeroing no RoPE pairs changes the logits not at all, bit for bit.
inline std::string zeroKnockoutContract(const Model& model, const std::vector<int>& tokens, bool rotary) {
  const Mat plain = runWithHooks(model, tokens, nullptr);
  EditHook none = headKnockout({});
  if (!(runWithHooks(model, tokens, &none).array() == plain.array()).all()) return "an empty head knockout changed the logits";
  if (rotary) {
    EditHook noPairs = ropePairKnockout(model, {{0, 0}, {1, 1}}, 0);
    if (!(runWithHooks(model, tokens, &noPairs).array() == plain.array()).all()) return "zeroing 0 RoPE pairs changed the logits";
    EditHook onePair = ropePairKnockout(model, {{0, 0}, {1, 1}}, 1);
    if ((runWithHooks(model, tokens, &onePair).array() == plain.array()).all()) return "zeroing a RoPE pair changed nothing";
  }
  return {};
}

}  // namespace attnlab::testing
