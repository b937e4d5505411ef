// study extrapolation: seed 000's R6 at toy scale. Trains one model per positional encoding, task and
// seed at the training length, evaluates each at multiples of that length (train/length_eval.h) and
// writes report.md (the table, and how it compares with seed 000's claims), results.csv and one
// accuracy-against-length chart per task.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>

#include "cli_error.h"
#include "format.h"
#include "io/checkpoint.h"
#include "io/config_json.h"
#include "report_chart.h"
#include "setup.h"
#include "study_extrapolation.h"
#include "train/length_eval.h"

namespace attnlab::cli {
namespace {

struct Encoding {
  std::string label, positional;
  Settings settings;
};

const std::vector<Encoding>& encodings() {
  static const std::vector<Encoding> list = {
      {"rope", "rope", {}},
      {"alibi", "alibi", {}},
      {"alibi_log", "alibi_log", {}},
      {"accumulated (learned)", "accumulated_rotation", {{"omega_mode", 0}}},
      {"accumulated (random)", "accumulated_rotation", {{"omega_mode", 1}}},
      {"none", "none", {}},
  };
  return list;
}

struct Row {
  std::string task, encoding;
  uint64_t seed = 0;
  double multiple = 1;
  int length = 0;
  EvalResult result;
};

ExperimentConfig configFor(const std::string& task, const Encoding& e, uint64_t seed, int steps, bool quick, int threads) {
  ExperimentConfig c;
  if (std::string why = loadPreset(task, c); !why.empty()) throw CliError(why, 1);
  if (task == "passkey") c.model.context = 32;  // short training sequences leave room to extrapolate
  if (quick) c.model.d_model = 16, c.model.n_heads = 2, c.model.d_ff = 32, c.train.batch = 4;
  c.model.positional = e.positional;
  c.model.positional_settings = e.settings;
  c.train.steps = steps;
  c.train.seed = seed;
  c.train.threads = threads;
  c.train.eval_every = steps;  // no evaluation during training: the study evaluates at the end
  return c;
}

double meanOf(const std::vector<Row>& rows, const std::string& task, const std::string& encoding, double multiple) {
  double sum = 0;
  int n = 0;
  for (const Row& r : rows)
    if (r.task == task && r.encoding == encoding && r.multiple == multiple && std::isfinite(r.result.accuracy)) sum += r.result.accuracy, ++n;
  return n ? sum / n : std::nan("");
}

std::string multipleText(double m) {
  std::ostringstream s;
  s << m << "x";
  return s.str();
}

// Seed 000's three claims, each checked on the mean accuracies at the longest multiple.
std::string agreement(const std::vector<Row>& rows, const std::vector<std::string>& tasks, const std::vector<double>& multiples) {
  const double last = multiples.back(), first = multiples.front();
  std::ostringstream s;
  for (const std::string& task : tasks) {
    const double rope = meanOf(rows, task, "rope", last), learned = meanOf(rows, task, "accumulated (learned)", last);
    const double alibiFirst = meanOf(rows, task, "alibi", first), alibiLast = meanOf(rows, task, "alibi", last);
    const double learnedFirst = meanOf(rows, task, "accumulated (learned)", first);
    s << "- **" << task << "**: accumulated rotation (learned) " << percent(learned) << " against RoPE " << percent(rope) << " at "
      << multipleText(last) << " — " << (learned > rope ? "agrees" : "does not agree")
      << " with seed 000 (accumulated rotations extrapolate better than RoPE). It falls from " << percent(learnedFirst) << " at "
      << multipleText(first) << ": " << (learned < learnedFirst ? "it degrades, as seed 000 says" : "it does not degrade here")
      << ". ALiBi goes from " << percent(alibiFirst) << " to " << percent(alibiLast) << ": "
      << (std::abs(alibiFirst - alibiLast) <= 0.05 ? "length-stable within 5 points, as seed 000 says"
                                                   : "not length-stable within 5 points, unlike seed 000")
      << ".\n";
  }
  return s.str();
}

}  // namespace

int runExtrapolationStudy(const Args& args) {
  const std::string out = args.required("out");
  const bool quick = args.has("quick");
  const int steps = static_cast<int>(args.integer("steps", quick ? 4 : 400, 1, 1000000));
  const int threads = threadsFrom(args, 2);
  std::vector<uint64_t> seeds = {1, 2, 3};
  if (quick) seeds = {1};
  if (args.has("seeds")) {
    seeds.clear();
    std::stringstream in(args.text("seeds"));
    for (std::string item; std::getline(in, item, ',');) {
      size_t used = 0;
      long long v = -1;
      try {
        v = std::stoll(item, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != item.size() || v < 0) throw CliError("--seeds: '" + item + "' is not a seed (example: --seeds 1,2,3)", kExitUsage);
      seeds.push_back(static_cast<uint64_t>(v));
    }
    if (seeds.empty()) throw CliError("--seeds needs at least one seed", kExitUsage);
  }
  const std::vector<double> multiples = quick ? std::vector<double>{1, 2} : std::vector<double>{1, 2, 4};
  const std::vector<std::string> tasks = {"passkey", "induction"};
  std::error_code ec;
  std::filesystem::create_directories(out + "/charts", ec);
  if (ec) throw CliError(out + ": cannot create the folder (" + ec.message() + ")");

  const auto start = std::chrono::steady_clock::now();
  std::vector<Row> rows;
  for (const std::string& task : tasks)
    for (const Encoding& e : encodings())
      for (uint64_t seed : seeds) {
        if (!args.has("quiet")) std::cerr << "study: " << task << ", " << e.label << ", seed " << seed << std::endl;
        try {
          Trainer trainer(configFor(task, e, seed, steps, quick, threads));
          for (int s = 0; s < steps; ++s) trainer.trainStep();
          for (double m : multiples) {
            const int length = static_cast<int>(std::lround(m * trainer.sequenceLength()));
            rows.push_back({task, e.label, seed, m, length, evaluateAtLength(trainer, length, quick ? 1 : 4)});
          }
        } catch (const DivergenceError& err) {
          throw CliError(task + ", " + e.label + ", seed " + std::to_string(seed) + ": " + err.what(), kExitDiverged);
        } catch (const ConfigError& err) {
          throw CliError(task + ", " + e.label + ": " + err.what(), 1);
        }
      }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::ostringstream csv;
  csv << "task,encoding,seed,multiple,length,loss,accuracy\n";
  for (const Row& r : rows)
    csv << r.task << "," << r.encoding << "," << r.seed << "," << r.multiple << "," << r.length << "," << fixed(r.result.loss, 5) << ","
        << fixed(r.result.accuracy, 5) << "\n";

  OffscreenGui gui;
  std::ostringstream md;
  md << "# Length extrapolation (seed 000, R6) at toy scale\n\n"
     << "Each model trains at its task's training length (" << steps << " steps, seeds";
  for (uint64_t s : seeds) md << " " << s;
  md << "), then is evaluated on sequences " << multiples.front() << " to " << multiples.back()
     << " times as long. Accuracy on the answer tokens, mean over the seeds (results.csv has every run).\n\n";
  for (const std::string& task : tasks) {
    md << "## " << task << "\n\n| encoding |";
    for (double m : multiples) md << " " << multipleText(m) << " |";
    md << "\n| --- |";
    for (size_t i = 0; i < multiples.size(); ++i) md << " --- |";
    md << "\n";
    LineChart chart{task + ": accuracy against length", "multiple of the training length", "accuracy", {}, false};
    for (const Encoding& e : encodings()) {
      md << "| " << e.label << " |";
      ChartSeries series{e.label, {}, {}, false};
      for (double m : multiples) {
        const double a = meanOf(rows, task, e.label, m);
        md << " " << percent(a) << " |";
        series.x.push_back(m);
        series.y.push_back(a);
      }
      md << "\n";
      chart.series.push_back(series);
    }
    const std::string png = "charts/" + task + ".png";
    if (std::string why = writeLineChartPng(chart, out + "/" + png); !why.empty()) throw CliError(why, 1);
    md << "\n![" << task << "](" << png << ")\n\n";
  }
  md << "## Against seed 000\n\n" << agreement(rows, tasks, multiples)
     << "\nToy models, few steps and " << seeds.size() << " seed(s): a direction, not a measurement of the paper's effect. "
     << "Induction's random half repeats symbols once it is longer than the symbol count, so part of its fall at long "
        "lengths is the task's, not the encoding's.\n";
  if (quick) md << "\n(--quick: tiny models trained a few steps; the numbers mean nothing.)\n";
  for (const auto& [name, text] : {std::pair<std::string, std::string>{"report.md", md.str()}, {"results.csv", csv.str()}})
    if (std::string why = writeFileAtomic(out + "/" + name, text); !why.empty()) throw CliError(why, 1);
  std::cout << "report written to " << out << "/report.md (" << duration(seconds) << ")" << std::endl;
  return 0;
}

}  // namespace attnlab::cli
