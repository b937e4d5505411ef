#include "study_support.h"

#include <fstream>
#include <thread>

#include "cli_error.h"
#include "format.h"
#include "list_flags.h"

namespace attnlab::cli {

std::string machineLine() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line, model = "unknown CPU";
  while (std::getline(cpuinfo, line))
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
      model = line.substr(line.find(':') + 2);
      break;
    }
  return model + " (" + std::to_string(std::thread::hardware_concurrency()) + " cores seen)";
}

std::string intervalText(const SeedInterval& r, int decimals) {
  if (r.n == 0) return "n/a";
  std::string text = fixed(r.mean, decimals);
  if (r.hasSpread()) text += " [" + fixed(r.low, decimals) + ", " + fixed(r.high, decimals) + "]";
  if (r.skipped) text += " (" + std::to_string(r.skipped) + " diverged)";
  return text;
}

std::vector<uint64_t> seedsFrom(const Args& args, std::vector<uint64_t> fallback) {
  if (!args.has("seeds")) return fallback;
  std::vector<uint64_t> seeds = parseSeedList(args.text("seeds"));
  if (seeds.empty()) throw CliError("--seeds needs at least one seed (example: --seeds 1,2,3)", kExitUsage);
  return seeds;
}

std::string studyCommand(const Args& args, const std::string& name, const std::vector<std::string>& flags) {
  std::string command = "attnlab-cli study " + name;
  for (const std::string& flag : flags)
    if (args.has(flag)) command += " --" + flag + (args.text(flag).empty() ? "" : " " + args.text(flag));
  return command;
}

}  // namespace attnlab::cli
