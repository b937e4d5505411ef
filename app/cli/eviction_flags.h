#pragma once
// Flags choosing a KV-cache eviction policy and budget (generate, study).
#include <vector>

#include "args.h"
#include "kv/live_cache_eval.h"

namespace attnlab::cli {

std::vector<FlagSpec> evictionFlags();  // --policy --budget --budget-scope --policy-set --kv-quant
// The policy, its settings and budget from the flags (policy "full" when --policy is absent).
// Throws CliError on a bad budget, scope or KEY=VALUE; the policy name and settings are checked
// when the decoder is built (Decoder and makeEvictionPolicy throw std::invalid_argument).
LiveCacheSetup evictionFromFlags(const Args& args);

}  // namespace attnlab::cli
