// study seed-checks: reproduces the seed checks of the analyses (engine/analysis/seed_checks.h) on
// freshly trained toy models and writes a Markdown report and CSV tables.
#include <filesystem>
#include <iostream>

#include "analysis/seed_checks.h"
#include "cli_error.h"
#include "command.h"
#include "io/checkpoint.h"
#include "setup.h"
#include "study_seed_checks.h"

namespace attnlab::cli {

int runSeedChecksStudy(const Args& args) {
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

}  // namespace attnlab::cli
