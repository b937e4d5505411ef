#pragma once
// What the seed studies of issue 18 share: the machine line of a report, a mean with its 95%
// interval over seeds as table text, the --seeds flag, and each study's findings table (findings.csv,
// which `study all` gathers into its index).
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/seed_interval.h"
#include "args.h"
#include "config/train_config.h"

namespace attnlab::cli {

// "Intel(R) Xeon(R) ... (2 cores seen)", from /proc/cpuinfo where it exists.
std::string machineLine();
// "1 thread", "2 threads".
std::string threadCount(int threads);
// "0.412 [0.371, 0.453]" (the 95% interval over seeds), "0.412" for one seed, "n/a" without values;
// "(k diverged)" appended when values were left out.
std::string intervalText(const SeedInterval& interval, int decimals = 3);
// Creates the report folder `out` and its charts/ (throws CliError naming the folder and the reason).
void makeStudyFolder(const std::string& out);
// What every study's runs share: `steps` steps with warm-up at most a quarter of them, the seed and
// threads given, and no validation during training (each study measures at its own points).
void trainForStudy(TrainConfig& train, int steps, uint64_t seed, int threads);
// --seeds, or `fallback` when absent.
std::vector<uint64_t> seedsFrom(const Args& args, std::vector<uint64_t> fallback);
// The study's command line as the user typed it, for the report: "attnlab-cli study NAME" and each flag given.
std::string studyCommand(const Args& args, const std::string& name, const std::vector<std::string>& flags);

// One claim of a seed paper checked by a study: what the paper says, what this run measured (with its
// interval), and the verdict, which is one of kVerdicts. The measured text must come from the run.
struct Finding {
  std::string finding, paper, measured, verdict;
};
inline const std::vector<std::string> kVerdicts = {"agrees", "partly", "does not"};
// findings.csv (header finding,paper,measured,verdict; fields quoted where they hold a comma or quote)
// as text. Throws std::invalid_argument for a verdict outside kVerdicts.
std::string findingsCsv(const std::vector<Finding>& findings);
std::string findingCsvRow(const Finding& finding);  // one line of it, with its newline
// The verdict on a claim that `x` is larger than `y`: "agrees" when x's 95% interval lies above y's,
// "partly" when only the means say so (or when one seed gives no interval), "does not" otherwise.
std::string verdictAbove(const SeedInterval& x, const SeedInterval& y);
// The same rows as a Markdown table, for the report's "Against the paper" section.
std::string findingsMarkdown(const std::vector<Finding>& findings);
std::string findingMarkdownRow(const Finding& finding);  // "| finding | paper | measured | verdict |" and a newline

}  // namespace attnlab::cli
