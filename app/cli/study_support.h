#pragma once
// What the seed studies of issue 18 share: the machine line of a report, a mean with its 95%
// interval over seeds as table text, and the --seeds flag.
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/seed_interval.h"
#include "args.h"

namespace attnlab::cli {

// "Intel(R) Xeon(R) ... (2 cores seen)", from /proc/cpuinfo where it exists.
std::string machineLine();
// "0.412 [0.371, 0.453]" (the 95% interval over seeds), "0.412" for one seed, "n/a" without values;
// "(k diverged)" appended when values were left out.
std::string intervalText(const SeedInterval& interval, int decimals = 3);
// --seeds, or `fallback` when absent.
std::vector<uint64_t> seedsFrom(const Args& args, std::vector<uint64_t> fallback);
// The study's command line as the user typed it, for the report: "attnlab-cli study NAME" and each flag given.
std::string studyCommand(const Args& args, const std::string& name, const std::vector<std::string>& flags);

}  // namespace attnlab::cli
