#include "kv/eviction_policy.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace attnlab {

int Budget::entriesFor(int seen) const {
  switch (kind) {
    case Kind::count: return static_cast<int>(value);
    case Kind::ratio: return std::max(1, static_cast<int>(std::ceil(value * seen - 1e-9)));
    case Kind::unlimited: break;
  }
  return std::numeric_limits<int>::max() / 2;
}

std::string Budget::describe() const {
  const std::string scope = perLayer ? " per layer" : " per head";
  switch (kind) {
    case Kind::count: return std::to_string(static_cast<int>(value)) + scope;
    case Kind::ratio: {
      std::string pct = std::to_string(value * 100);
      pct.erase(pct.find_last_not_of('0') + 1);
      if (pct.back() == '.') pct.pop_back();
      return pct + "%" + scope;
    }
    case Kind::unlimited: break;
  }
  return "unlimited";
}

std::string parseBudget(const std::string& text, const std::string& scope, Budget& out) {
  if (scope != "head" && scope != "layer") return "budget scope '" + scope + "' is not available (known: head, layer)";
  const bool ratio = !text.empty() && text.back() == '%';
  const std::string number = ratio ? text.substr(0, text.size() - 1) : text;
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(number, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (number.empty() || used != number.size() || !std::isfinite(value))
    return "budget '" + text + "' is not a count (e.g. 32) or a ratio (e.g. 25%)";
  if (ratio && !(value > 0 && value <= 100)) return "budget ratio '" + text + "' must be in (0%, 100%]";
  if (!ratio && !(value >= 1 && value == std::floor(value) && value <= 1e9))
    return "budget '" + text + "' must be a whole number of entries >= 1 (or a ratio such as 25%)";
  out.kind = ratio ? Budget::Kind::ratio : Budget::Kind::count;
  out.value = ratio ? value / 100 : value;
  out.perLayer = scope == "layer";
  return {};
}

std::vector<KeepDecision> chooseKept(EvictionPolicy& policy, const std::vector<HeadView>& views, bool pooled, bool exact) {
  // The order entries are kept in: protected first, then entries that may stay, then the highest
  // score, then the most recent, then the lower head (only pooled heads can tie that far). A
  // strict total order, so the kept set is the one sorting all candidates would give. It is held
  // as two integers per candidate, compared in turn: (protected, may stay, score) and (position,
  // lower head).
  struct Candidate {
    uint64_t first, then;
    int head, index;
  };
  auto candidate = [](int head, int index, int position, float score, bool protect, bool dropped) {
    const uint64_t first = (uint64_t{protect} << 33) | (uint64_t{!dropped} << 32) | orderedScoreBits(score);
    const uint64_t then = (static_cast<uint64_t>(static_cast<uint32_t>(position)) << 32) | (0xFFFFFFFFu - static_cast<uint32_t>(head));
    return Candidate{first, then, head, index};
  };
  auto ranksBefore = [](const Candidate& a, const Candidate& b) { return a.first != b.first ? a.first > b.first : a.then > b.then; };
  std::vector<KeepDecision> out(views.size());
  // Keeps the first `count` candidates in that order; nth_element finds them without sorting the
  // rest, and when a decoding step drops one entry of budget + 1, a single pass finds it.
  auto keepBest = [&](std::vector<Candidate>& pool, long long count) {
    if (count <= 0) return;
    if (count + 1 == static_cast<long long>(pool.size()))  // one must go: the last in that order, found in one pass
      std::iter_swap(std::max_element(pool.begin(), pool.end(), ranksBefore), pool.end() - 1);
    else if (count < static_cast<long long>(pool.size()))
      std::nth_element(pool.begin(), pool.begin() + count, pool.end(), ranksBefore);
    for (long long r = 0; r < static_cast<long long>(pool.size()) && r < count; ++r)
      if (exact || !out[pool[r].head].dropped[pool[r].index]) out[pool[r].head].keep[pool[r].index] = 1;
  };
  const bool shared = pooled && !exact;  // the layer's heads compete in one pool
  thread_local std::vector<Candidate> pool;  // reused from step to step: a decoding step calls this per layer
  thread_local std::vector<float> score;
  thread_local std::vector<char> protect;
  pool.clear();
  long long sharedBudget = 0;
  for (size_t h = 0; h < views.size(); ++h) {
    const int n = views[h].cache.size();
    score.assign(n, 0.0f);
    protect.assign(n, 0);
    policy.score(views[h], score, protect);
    out[h].keep.assign(n, 0);
    out[h].dropped.assign(n, 0);
    out[h].protect = protect;
    for (int i = 0; i < n; ++i) out[h].dropped[i] = std::isinf(score[i]) && score[i] < 0 && !protect[i];
    if (!shared && n <= views[h].budget) {  // all fit: keepBest would keep each that may stay
      for (int i = 0; i < n; ++i) out[h].keep[i] = exact || !out[h].dropped[i];
      continue;
    }
    if (!shared) pool.clear();
    for (int i = 0; i < n; ++i) {
      const char dropped = out[h].dropped[i];
      const float ranked = std::isnan(score[i]) ? -std::numeric_limits<float>::infinity() : score[i];  // NaN ranks lowest
      pool.push_back(candidate(static_cast<int>(h), i, views[h].cache.positions[i], ranked, protect[i], dropped));
    }
    if (shared) sharedBudget += views[h].budget;
    else keepBest(pool, views[h].budget);
  }
  if (shared) keepBest(pool, sharedBudget);
  return out;
}

bool isDenseReferencePolicy(const std::string& name) {
  const auto policy = EvictionPolicyRegistry::instance().create(name);
  return policy && policy->isDenseReference();
}

std::unique_ptr<EvictionPolicy> makeEvictionPolicy(const std::string& name, const Settings& settings, const ModelConfig& model) {
  auto policy = EvictionPolicyRegistry::instance().create(name);
  if (!policy)
    throw std::invalid_argument("unknown eviction policy '" + name + "' (known: " + EvictionPolicyRegistry::instance().names() + ")");
  if (auto why = validateSettings(settings, policy->settingSpecs(), name); !why.empty()) throw std::invalid_argument(why);
  for (const auto& [key, value] : settings) {
    bool known = false;
    for (const auto& spec : policy->settingSpecs()) known = known || spec.key == key;
    if (!known) throw std::invalid_argument("eviction policy '" + name + "' has no setting '" + key + "'");
  }
  if (auto why = policy->configure(settings, model); !why.empty()) throw std::invalid_argument(why);
  return policy;
}

}  // namespace attnlab
