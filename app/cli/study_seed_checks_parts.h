#pragma once
// The two halves of `study seed-checks` (study_seed_checks.cpp runs the models): the QK spectra
// by positional encoding (study_seed_checks_spectra.cpp), and the head-drop curves
// (study_seed_checks_head_drop.cpp). Each turns the runs into its CSVs, charts, a report section
// and the paper's claims checked against the intervals over seeds.
#include <string>
#include <utility>
#include <vector>

#include "analysis/seed_checks.h"
#include "study_support.h"

namespace attnlab::cli {

struct StudySection {
  std::string markdown;                                     // "## ..." and its tables and charts
  std::vector<Finding> findings;                            // for findings.csv and "Against the paper"
  std::vector<std::pair<std::string, std::string>> files;  // CSV name and text
};

// spectraSection reads the spectral runs only. Both need an OffscreenGui alive; they write their
// charts under `out`/charts and throw CliError when one cannot be written.
StudySection spectraSection(const std::vector<SeedCheckRun>& runs, const std::string& out);
StudySection headDropSection(const std::vector<SeedCheckRun>& runs, const std::string& out);

// The verdict on a claim that `difference` > 0, from its 95% interval over seeds: agrees when the
// interval lies above 0, does not when below, partly when it straddles 0 or there is one seed.
std::string positiveVerdict(const SeedInterval& difference);

}  // namespace attnlab::cli
