#pragma once
// `attnlab-cli study all`: every study in turn, each into its own folder, then an index report that
// gathers their findings tables (cmd_study.cpp holds the table of studies).
#include <string>
#include <vector>

#include "args.h"

namespace attnlab::cli {

struct StudyEntry {
  std::string name;   // the subcommand: "live-cache"
  std::string title;  // for the index: "R1 live cache under hard eviction (seed 000)"
  int (*run)(const Args&);
};

// Runs each study of `table` (or those --studies names) with --out DIR/<name> and the --quick, --seeds,
// --threads and --quiet given; a study that fails is recorded in the index and the rest still run.
// --resume skips a study whose folder already holds findings.csv. Returns the first failure's exit code.
int runAllStudies(const Args& args, const std::vector<StudyEntry>& table, const std::vector<FlagSpec>& specs);

// One CSV line split into fields (quoted fields may hold commas and doubled quotes).
std::vector<std::string> splitCsvLine(const std::string& line);

}  // namespace attnlab::cli
