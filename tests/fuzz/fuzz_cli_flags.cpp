// The command-line tool's flag parser and every value parser behind its options (app/cli): the
// input is one argument per line. Refusals are CliError (or std::invalid_argument where the engine
// checks a name); anything else escaping, a crash or a hang is a finding. --config is left out: it
// names a file to read, which the config.json target covers.
#include <sstream>
#include <stdexcept>

#include "args.h"
#include "cli_error.h"
#include "eviction_flags.h"
#include "export_plan.h"
#include "fuzz_support.h"
#include "list_flags.h"
#include "opened_model.h"
#include "setup.h"

using namespace attnlab;
using namespace attnlab::cli;

namespace {

std::vector<FlagSpec> allFlags() {
  std::vector<FlagSpec> specs;
  for (const FlagSpec& f : experimentFlags())
    if (f.name != "config") specs.push_back(f);
  for (const FlagSpec& f : evictionFlags()) specs.push_back(f);
  specs.push_back(idsFlag());
  for (const char* name : {"lengths", "seeds", "budgets", "policies", "target-ids", "scale", "devices", "tokens-per-second", "lr", "top-k"})
    specs.push_back({name, "V", ""});
  specs.push_back({"fsdp", "", ""});
  specs.push_back({"json", "", ""});
  return specs;
}

void parseAll(const Args& args) {
  args.integer("top-k", 5, 1, 1000);
  args.number("lr", 1e-3, 1e-6, 1.0);
  if (args.has("lengths")) parseMultiples(args.text("lengths"));
  if (args.has("seeds")) parseSeedList(args.text("seeds"));
  if (args.has("budgets")) parseBudgetShares(args.text("budgets"));
  if (args.has("policies")) splitList(args.text("policies"));
  if (args.has("target-ids")) parseIdList("target-ids", args.text("target-ids"), 260);
  if (args.has("ids")) idsFlagValue(args, 260);
  evictionFromFlags(args);
  if (args.has("preset")) {
    const ExperimentConfig config = experimentFromFlags(args);
    if (args.has("scale"))
      scalePlan(config, {args.text("scale"), static_cast<int>(args.integer("devices", 1, 1, 1 << 20)),
                         args.number("tokens-per-second", 0, 0, 1e15), args.has("fsdp")});
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<FlagSpec> specs = allFlags();
  std::vector<std::string> arguments;
  std::stringstream lines(fuzz::bytesOf(data, size));
  for (std::string line; std::getline(lines, line);) arguments.push_back(line);
  try {
    parseAll(Args(arguments, specs));
  } catch (const CliError&) {
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
