// study: reproduces the seed checks of the analyses (engine/analysis/seed_checks.h) on freshly
// trained toy models and writes a Markdown report and CSV tables.
#include <filesystem>
#include <iostream>

#include "analysis/seed_checks.h"
#include "cli_error.h"
#include "command.h"
#include "io/checkpoint.h"
#include "setup.h"

namespace attnlab::cli {
namespace {

int runStudy(const Args& args) {
  const std::string out = args.required("out");
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  if (ec || !std::filesystem::is_directory(out)) throw CliError(out + ": cannot create the folder" + (ec ? " (" + ec.message() + ")" : ""));
  SeedCheckOptions options;
  options.quick = args.has("quick");
  options.threads = threadsFrom(args, 2);
  options.seed = static_cast<uint64_t>(args.integer("seed", 1, 0, std::numeric_limits<long long>::max()));
  options.progress = [](const std::string& line) { std::cerr << "study: " << line << std::endl; };
  std::vector<SeedCheckFile> files;
  try {
    files = runSeedChecks(options);
  } catch (const DivergenceError& e) {
    throw CliError(e.what(), kExitDiverged);
  }
  for (const SeedCheckFile& f : files)
    if (std::string why = writeFileAtomic(out + "/" + f.name, f.text); !why.empty()) throw CliError(why, 1);
  std::cout << files.front().text.substr(0, files.front().text.find("## Details")) << "Wrote " << out << "/report.md and "
            << files.size() - 1 << " CSV files." << std::endl;
  return 0;
}

}  // namespace

Command studyCommand() {
  return {"study",
          "--out DIR [--quick] [--seed S] [--threads N]",
          "reproduce the seed checks (QK spectra by positional encoding, head-drop curves) on fresh toy models",
          {{"out", "DIR", "folder for report.md, spectra.csv, importance.csv and head_drop.csv (created if missing)"},
           {"quick", "", "3 short runs (about a minute on 2 cores) instead of 6 full ones (about 10 minutes)"},
           {"seed", "S", "seed of every model and sample (default 1)"},
           threadsFlag()},
          "(a) seed 000: trains the induction preset under RoPE, learned absolute positions and ALiBi, follows every\n"
          "head's QK spectrum and maps over training, checks the heads start at the Ginibre null and compares how\n"
          "rotational the strongest previous-token head is. (b) seed 001: head-drop curves by importance order on\n"
          "every model trained (plus recall, copy and sorting models in the full run). Progress goes to stderr.",
          runStudy};
}

}  // namespace attnlab::cli
