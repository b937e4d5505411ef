#include "study_all.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli_error.h"
#include "format.h"
#include "io/checkpoint.h"
#include "list_flags.h"
#include "study_support.h"

namespace attnlab::cli {

std::vector<std::string> splitCsvLine(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') fields.back() += line[++i];
    else if (c == '"') quoted = !quoted;
    else if (c == ',' && !quoted) fields.emplace_back();
    else fields.back() += c;
  }
  return fields;
}

namespace {

struct Outcome {
  const StudyEntry* study = nullptr;
  std::string status;  // "ran", "kept from an earlier run", or "failed: why"
  double seconds = 0;
  std::string runTime;  // a kept study's, as its own report states it: "1h02m with 1 thread"
  std::vector<Finding> findings;
};

// The run time a study's report.md states on its machine line ("...; run time 1h02m"), with the
// thread count before it, or "-" when the report has none.
std::string reportedRunTime(const std::filesystem::path& report) {
  std::ifstream in(report);
  std::string line;
  while (std::getline(in, line)) {
    const size_t at = line.find("; run time ");
    if (line.rfind("- Machine: ", 0) != 0 || at == std::string::npos) continue;
    std::string time = line.substr(at + 11);
    time = time.substr(0, time.find_first_of(" (,"));
    const size_t comma = line.rfind(", ", at);
    const std::string threads = comma == std::string::npos ? "" : line.substr(comma + 2, at - comma - 2);
    return threads.find("thread") != std::string::npos ? time + " with " + threads : time;
  }
  return "-";
}

// findings.csv of one study folder; a missing or malformed file is said in `why`.
std::vector<Finding> readFindings(const std::filesystem::path& file, std::string& why) {
  std::ifstream in(file);
  std::string line;
  if (!in || !std::getline(in, line) || line != "finding,paper,measured,verdict") {
    why = file.string() + " is missing or has no findings header";
    return {};
  }
  std::vector<Finding> rows;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const std::vector<std::string> f = splitCsvLine(line);
    if (f.size() != 4) {
      why = file.string() + ": a row with " + std::to_string(f.size()) + " fields instead of 4";
      return {};
    }
    if (std::find(kVerdicts.begin(), kVerdicts.end(), f[3]) == kVerdicts.end()) {
      why = file.string() + ": verdict '" + f[3] + "' is not agrees, partly or does not";
      return {};
    }
    rows.push_back({f[0], f[1], f[2], f[3]});
  }
  return rows;
}

std::vector<std::string> chosen(const Args& args, const std::vector<StudyEntry>& table) {
  std::vector<std::string> names;
  if (!args.has("studies")) {
    for (const StudyEntry& s : table) names.push_back(s.name);
    return names;
  }
  for (const std::string& name : splitList(args.text("studies"))) {
    bool known = false;
    for (const StudyEntry& s : table) known = known || s.name == name;
    if (!known) {
      std::string list;
      for (const StudyEntry& s : table) list += (list.empty() ? "" : ", ") + s.name;
      throw CliError("--studies: no study '" + name + "' (known: " + list + ")");
    }
    names.push_back(name);
  }
  return names;
}

Outcome runOne(const Args& args, const StudyEntry& study, const std::vector<FlagSpec>& specs, const std::filesystem::path& folder) {
  Outcome o{&study, "ran", 0, {}, {}};
  if (args.has("resume") && std::filesystem::exists(folder / "findings.csv")) {
    o.status = "kept from an earlier run";
    o.runTime = reportedRunTime(folder / "report.md");
  } else {
    std::vector<std::string> argv = {"--subcommand", study.name, "--out", folder.string()};
    for (const char* flag : {"quick", "quiet"})
      if (args.has(flag)) argv.push_back(std::string("--") + flag);
    for (const char* flag : {"seeds", "threads"})
      if (args.has(flag)) argv.insert(argv.end(), {std::string("--") + flag, args.text(flag)});
    if (!args.has("quiet")) std::cerr << "study all: " << study.name << std::endl;
    const auto start = std::chrono::steady_clock::now();
    try {
      study.run(Args(argv, specs));
    } catch (const CliError& e) {
      o.status = "failed (exit " + std::to_string(e.code) + "): " + e.what();
    } catch (const std::exception& e) {
      o.status = std::string("failed: ") + e.what();
    }
    o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  if (o.status.rfind("failed", 0) != 0) {
    std::string why;
    o.findings = readFindings(folder / "findings.csv", why);
    if (!why.empty()) o.status = "failed: " + why;
  }
  return o;
}

// A resumed index ran only some studies: the others' run times are their own reports'.
std::string keptNote(const std::vector<Outcome>& outcomes) {
  const auto kept = std::count_if(outcomes.begin(), outcomes.end(), [](const Outcome& o) { return o.seconds == 0 && !o.runTime.empty(); });
  if (kept == 0) return {};
  return " (" + std::to_string(kept) + " of " + std::to_string(outcomes.size()) +
         " studies kept from earlier runs, not counted: each one's run time is in the table of studies)";
}

std::string indexReport(const Args& args, const std::vector<Outcome>& outcomes, double seconds) {
  int counts[3] = {0, 0, 0};
  for (const Outcome& o : outcomes)
    for (const Finding& f : o.findings)
      for (size_t v = 0; v < kVerdicts.size(); ++v) counts[v] += f.verdict == kVerdicts[v];
  std::ostringstream md;
  md << "# The seed findings, as this lab measured them\n\n"
     << "Each study trains its models here, over several seeds, and checks the seed papers' claims against the 95% "
        "intervals: agrees (the interval supports the claim), partly (the means do, the intervals do not settle it) or "
        "does not. Each study's own report has its settings, tables and charts.\n\n"
     << "- Command: `" << studyCommand(args, "all", {"quick", "seeds", "threads", "studies", "resume"}) << " --out "
     << args.text("out") << "`\n"
     << "- Machine: " << machineLine() << "; run time " << duration(seconds) << keptNote(outcomes) << "\n"
     << "- Verdicts: " << counts[0] << " agree, " << counts[1] << " partly, " << counts[2] << " do not\n\n"
     << "| study | finding | the paper says | this run measured | verdict |\n|---|---|---|---|---|\n";
  for (const Outcome& o : outcomes)
    for (const Finding& f : o.findings) {
      const std::string link = "[" + o.study->name + "](" + o.study->name + "/report.md)";
      md << "| " << link << " " << findingMarkdownRow(f);
    }
  md << "\n## The studies\n\n| study | what it checks | status | run time |\n|---|---|---|---|\n";
  for (const Outcome& o : outcomes)
    md << "| [" << o.study->name << "](" << o.study->name << "/report.md) | " << o.study->title << " | " << o.status << " | "
       << (o.seconds > 0 ? duration(o.seconds) : o.runTime.empty() ? "-" : o.runTime) << " |\n";
  if (args.has("quick")) md << "\n(--quick: tiny models trained a few steps; the numbers mean nothing.)\n";
  return md.str();
}

std::string indexCsv(const std::vector<Outcome>& outcomes) {
  std::string csv = "study,finding,paper,measured,verdict\n";
  for (const Outcome& o : outcomes)
    for (const Finding& f : o.findings) csv += o.study->name + "," + findingCsvRow(f);
  return csv;
}

}  // namespace

int runAllStudies(const Args& args, const std::vector<StudyEntry>& table, const std::vector<FlagSpec>& specs) {
  const std::filesystem::path out = args.required("out");
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  if (ec) throw CliError(out.string() + ": cannot create the folder (" + ec.message() + ")");
  const auto start = std::chrono::steady_clock::now();
  std::vector<Outcome> outcomes;
  int exitCode = 0;
  for (const std::string& name : chosen(args, table))
    for (const StudyEntry& study : table)
      if (study.name == name) {
        outcomes.push_back(runOne(args, study, specs, out / name));
        if (outcomes.back().status.rfind("failed", 0) == 0) {
          std::cerr << "study all: " << name << " " << outcomes.back().status << std::endl;
          if (!exitCode) exitCode = 1;
        }
      }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (const auto& [name, text] : {std::pair<std::string, std::string>{"report.md", indexReport(args, outcomes, seconds)},
                                   {"findings.csv", indexCsv(outcomes)}})
    if (std::string why = writeFileAtomic((out / name).string(), text); !why.empty()) throw CliError(why, 1);
  std::cout << "index written to " << (out / "report.md").string() << " (" << duration(seconds) << ")" << std::endl;
  return exitCode;
}

}  // namespace attnlab::cli
