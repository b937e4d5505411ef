#pragma once
// Which KV entries a decoder keeps (catalogue section 4). After every step's attention, a policy
// scores the live entries of each layer and KV head; the decoder keeps the protected entries and
// then the highest scores up to the budget, and drops entries scored -inf whatever the budget.
// Policies that need attention weights read the statistics the decoder keeps in the cache from
// each step's own attention (this step's weights, the sum over past steps), never a second pass.
// Members register in EvictionPolicyRegistry, one file each.
#include <bit>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/registry.h"
#include "core/settings.h"
#include "kv/kv_cache.h"
#include "config/model_config.h"

namespace attnlab {

// A cache budget: a count of entries or a ratio of the positions seen so far, per KV head or per
// layer (a layer's heads then share budget x kvHeads entries, compared by score across heads).
struct Budget {
  enum class Kind { unlimited, count, ratio };
  Kind kind = Kind::unlimited;
  double value = 0;       // entries (count) or a fraction in (0, 1] (ratio)
  bool perLayer = false;
  // Entries one KV head may keep after `seen` positions (at least 1); a large number when unlimited.
  int entriesFor(int seen) const;
  std::string describe() const;  // "32 per head", "25% per layer", "unlimited"
};

// Parses "N" (a count >= 1) or "R%" (0 < R <= 100) with scope "head" or "layer". Returns "" or a
// one-line reason.
std::string parseBudget(const std::string& text, const std::string& scope, Budget& out);

// One layer and KV head as a policy sees it after the step's attention.
struct HeadView {
  const HeadCache& cache;
  int layer = 0, kvHead = 0;
  int position = 0;        // the current query's position
  int budget = 0;          // entries this head may keep now (its share, under a per-layer budget)
  bool budgeted = false;   // false when the decoder runs without a budget (budget is then huge)
};

class EvictionPolicy {
 public:
  virtual ~EvictionPolicy() = default;
  virtual std::vector<SettingSpec> settingSpecs() const { return {}; }
  // Reads settings; returns "" or a one-line reason (e.g. a model without the gate the policy reads).
  virtual std::string configure(const Settings& settings, const ModelConfig& model) = 0;
  // False for policies that decide without a budget (full; learned gate by threshold).
  virtual bool needsBudget() const { return true; }
  // A new sequence starts (policies with per-sequence state forget it).
  virtual void reset() {}
  // score[i]: higher keeps; -inf drops the entry whatever the budget. protect[i] = 1 keeps it first.
  virtual void score(const HeadView& view, std::vector<float>& score, std::vector<char>& protect) = 0;
  // Why an entry left: over budget (its score lost), or scored -inf.
  virtual std::string budgetRule() const = 0;
  virtual std::string dropRule() const { return budgetRule(); }
  // What the entries it protects are, and what its score measures, so that no caller needs the
  // policy's name to explain a kept entry.
  virtual KeptAs protectedAs() const { return KeptAs::recent; }
  virtual KeptAs scoredAs() const { return KeptAs::score; }
  // The dense reference: keeps every entry and takes no budget.
  virtual bool isDenseReference() const { return false; }
  // Budget allocation across layers and heads (kvpress's PyramidKV, AdaKV). The per-head budget of
  // `layer` (of `layers`) when a uniform allocation gives each head `uniform`; the default keeps it.
  virtual int layerBudget(int uniform, int /*layer*/, int /*layers*/) const { return uniform; }
  // True when a layer's KV heads compete by score for the layer's total (as under a per-layer
  // budget) whatever the budget's scope: heads with spread-out attention then keep more.
  virtual bool poolsHeads() const { return false; }
};

using EvictionPolicyRegistry = Registry<EvictionPolicy>;

// What one KV head keeps after a step: keep[i] for each live entry, dropped[i] when the
// policy's rule removed it whatever the budget (scored -inf and not protected), and protect[i]
// as the policy marked it.
struct KeepDecision {
  std::vector<char> keep, dropped, protect;
};

// A score's bits as an unsigned integer that orders as the scores do (negative floats flipped
// whole, the rest above them; -0 as 0, as the float comparison has it; not for NaN), so that ranks
// built from scores compare as integers.
inline uint32_t orderedScoreBits(float score) {
  const uint32_t bits = std::bit_cast<uint32_t>(score + 0.0f);
  return (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
}

// Asks the policy for every head's scores, then keeps per head its view.budget best entries:
// protected first, then entries that may stay, then the highest score (NaN lowest), then the most
// recent, then the lower head.
// pooled: the layer's heads compete for the sum of their budgets (a per-layer budget).
// exact: each head keeps exactly its budget (the matched protocol), even entries scored -inf.
std::vector<KeepDecision> chooseKept(EvictionPolicy& policy, const std::vector<HeadView>& views, bool pooled, bool exact);

// Whether the registered policy `name` is the dense reference (false for an unknown name): callers
// that only hold a name (a picker, a study's list) ask here instead of comparing names.
bool isDenseReferencePolicy(const std::string& name);

// The named policy, configured. Throws std::invalid_argument with a one-line reason on an unknown
// name or a bad setting.
std::unique_ptr<EvictionPolicy> makeEvictionPolicy(const std::string& name, const Settings& settings, const ModelConfig& model);

}  // namespace attnlab
