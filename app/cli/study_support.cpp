#include "study_support.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>
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

std::string threadCount(int threads) { return std::to_string(threads) + (threads == 1 ? " thread" : " threads"); }

std::string intervalText(const SeedInterval& r, int decimals) {
  if (r.n == 0) return "n/a";
  std::string text = fixed(r.mean, decimals);
  if (r.hasSpread()) text += " [" + fixed(r.low, decimals) + ", " + fixed(r.high, decimals) + "]";
  if (r.skipped) text += " (" + std::to_string(r.skipped) + " diverged)";
  return text;
}

void makeStudyFolder(const std::string& out) {
  std::error_code ec;
  std::filesystem::create_directories(out + "/charts", ec);
  if (ec || !std::filesystem::is_directory(out)) throw CliError(out + ": cannot create the folder" + (ec ? " (" + ec.message() + ")" : ""));
}

void trainForStudy(TrainConfig& train, int steps, uint64_t seed, int threads) {
  train.steps = steps;
  train.warmup = std::min(train.warmup, steps / 4);
  train.seed = seed;
  train.threads = threads;
  train.eval_every = 0;
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
    if (args.has(flag)) {
      command += " --";
      command += flag;
      if (const std::string value = args.text(flag); !value.empty()) command += " " + value;
    }
  return command;
}

namespace {
std::string csvField(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c == '\n' ? ' ' : c);
  return quoted + "\"";
}
std::string markdownCell(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  for (size_t at = text.find('|'); at != std::string::npos; at = text.find('|', at + 2)) text.replace(at, 1, "\\|");
  return text;
}
}  // namespace

std::string findingCsvRow(const Finding& f) {
  if (std::find(kVerdicts.begin(), kVerdicts.end(), f.verdict) == kVerdicts.end())
    throw std::invalid_argument("finding '" + f.finding + "': verdict '" + f.verdict + "' is not agrees, partly or does not");
  return csvField(f.finding) + "," + csvField(f.paper) + "," + csvField(f.measured) + "," + csvField(f.verdict) + "\n";
}

std::string findingsCsv(const std::vector<Finding>& findings) {
  std::string csv = "finding,paper,measured,verdict\n";
  for (const Finding& f : findings) csv += findingCsvRow(f);
  return csv;
}

std::string verdictAbove(const SeedInterval& x, const SeedInterval& y) {
  if (x.n == 0 || y.n == 0 || !(x.mean > y.mean)) return "does not";
  return x.hasSpread() && y.hasSpread() && x.low > y.high ? "agrees" : "partly";
}

std::string findingMarkdownRow(const Finding& f) {
  return "| " + markdownCell(f.finding) + " | " + markdownCell(f.paper) + " | " + markdownCell(f.measured) + " | " + f.verdict + " |\n";
}

std::string findingsMarkdown(const std::vector<Finding>& findings) {
  std::string md = "| finding | the paper says | this run measured | verdict |\n|---|---|---|---|\n";
  for (const Finding& f : findings) md += findingMarkdownRow(f);
  return md;
}

}  // namespace attnlab::cli
