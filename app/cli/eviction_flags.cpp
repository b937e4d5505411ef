#include "eviction_flags.h"

#include <cmath>

#include "cli_error.h"

namespace attnlab::cli {

std::vector<FlagSpec> evictionFlags() {
  return {{"policy", "NAME", "KV-cache eviction policy (see 'attnlab-cli list'); decodes through the cache"},
          {"budget", "N|R%", "entries each KV head keeps: a count, or a share of the positions seen (e.g. 25%)"},
          {"budget-scope", "head|layer", "budget per KV head (default) or shared by a layer's KV heads"},
          {"policy-set", "KEY=VALUE", "a setting of the policy, e.g. sinks=4 or threshold=0.3 (repeatable)", true},
          {"kv-quant", "fp32|int8|int4", "how the cache stores keys and values: float32 (default) or per-token int8 / int4 with one scale a row"}};
}

LiveCacheSetup evictionFromFlags(const Args& args) {
  LiveCacheSetup setup;
  setup.policy = args.text("policy", "full");
  if (args.has("budget"))
    if (std::string why = parseBudget(args.text("budget"), args.text("budget-scope", "head"), setup.budget); !why.empty())
      throw CliError(why);
  if (args.has("budget-scope") && !args.has("budget")) throw CliError("--budget-scope needs --budget");
  if (args.has("kv-quant") && !parseKvQuant(args.text("kv-quant"), setup.quant))
    throw CliError("--kv-quant '" + args.text("kv-quant") + "' is not a cache format (known: " + kKvQuantNames + ")");
  for (const std::string& assignment : args.all("policy-set")) {
    const size_t eq = assignment.find('=');
    size_t used = 0;
    double value = 0;
    try {
      value = std::stod(assignment.substr(eq == std::string::npos ? assignment.size() : eq + 1), &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (eq == std::string::npos || eq == 0 || used == 0 || eq + 1 + used != assignment.size() || !std::isfinite(value))
      throw CliError("--policy-set '" + assignment + "' is not KEY=NUMBER");
    setup.settings[assignment.substr(0, eq)] = value;
  }
  return setup;
}

}  // namespace attnlab::cli
