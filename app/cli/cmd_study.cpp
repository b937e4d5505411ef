// study: the seed papers' experiments at toy scale, each writing a report folder.
// live-cache (seed 000's 2x2x2 live-cache study: report.md, results.csv, sweep.csv, charts/*.png) lives here;
// seed-checks (QK spectra by positional encoding, head-drop curves) in study_seed_checks.cpp.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "cli_error.h"
#include "command.h"
#include "format.h"
#include "kv/eviction_policy.h"
#include "kv/live_cache_study.h"
#include "list_flags.h"
#include "report_chart.h"
#include "study_all.h"
#include "study_extrapolation.h"
#include "study_low_precision.h"
#include "study_qk_runaway.h"
#include "study_sinks.h"
#include "study_seed_checks.h"

namespace attnlab::cli {
namespace {

// The preset (sized to finish in under 15 minutes on 2 idle cores), --quick, then each flag.
LiveCacheStudySettings settingsFrom(const Args& args) {
  LiveCacheStudySettings s;
  if (args.has("quick")) {  // seconds, for tests: the numbers mean nothing
    s.d_model = 16;
    s.n_layers = 1;
    s.n_heads = 2;
    s.d_ff = 32;
    s.context = 16;
    s.steps = 4;
    s.batch = 4;
    s.eval_sequences = 2;
    s.budget_ratios = {0.25, 0.5};
    s.sweep_policies = {"window", "h2o", "learned_gate"};
  }
  s.d_model = static_cast<int>(args.integer("d-model", s.d_model, 4, 1024));
  s.n_layers = static_cast<int>(args.integer("layers", s.n_layers, 1, 16));
  s.n_heads = static_cast<int>(args.integer("heads", s.n_heads, 1, 64));
  s.d_ff = static_cast<int>(args.integer("d-ff", s.d_ff, 1, 8192));
  s.context = static_cast<int>(args.integer("context", s.context, 4, 1024));
  s.steps = static_cast<int>(args.integer("steps", s.steps, 1, 1000000));
  s.batch = static_cast<int>(args.integer("batch", s.batch, 1, 4096));
  s.lr = args.number("lr", s.lr, 1e-6, 1.0);
  s.sparsity = args.number("sparsity", s.sparsity, 0.0, 100.0);
  s.threshold = args.number("threshold", s.threshold, 0.0, 1.0);
  s.eval_sequences = static_cast<int>(args.integer("eval-sequences", s.eval_sequences, 1, 100000));
  s.threads = static_cast<int>(args.integer("threads", s.threads, 1, 64));
  if (args.has("seeds")) s.seeds = parseSeedList(args.text("seeds"));
  if (args.has("budgets")) s.budget_ratios = parseBudgetShares(args.text("budgets"));
  if (args.has("policies")) s.sweep_policies = splitList(args.text("policies"));
  if (std::string why = validateStudy(s); !why.empty()) throw CliError(why);
  return s;
}

std::string num(double v, int decimals = 3) { return std::isfinite(v) ? fixed(v, decimals) : "n/a"; }
std::string signedPercent(double v) {
  if (!std::isfinite(v)) return "n/a";
  std::string text = fixed(100 * v, 2) + "%";
  return v >= 0 ? "+" + text : text;
}
std::string fileSafe(std::string s) {
  for (char& c : s)
    if (c == '/' || c == '+') c = '_';
  return s;
}

const LiveCacheStudyRow* findRow(const LiveCacheStudyResult& r, const std::string& attention, const std::string& positional,
                                 bool gated, uint64_t seed) {
  for (const auto& row : r.rows)
    if (row.attention == attention && row.positional == positional && row.gated == gated && row.seed == seed) return &row;
  return nullptr;
}

// The seed paper's three findings, each checked against this run's numbers (and said as measured).
std::string findings(const LiveCacheStudyResult& r) {
  std::ostringstream out;
  const auto& s = r.settings;
  int denseWorse = 0, denseCases = 0, sigmoidSmaller = 0, hardCases = 0, sigmoidBeats = 0, softmaxBeats = 0, matchedCases = 0;
  std::ostringstream details;
  for (uint64_t seed : s.seeds)
    for (const char* pos : {"rope", "alibi"}) {
      for (bool gated : {false, true}) {
        const auto *soft = findRow(r, "softmax", pos, gated, seed), *sig = findRow(r, "sigmoid", pos, gated, seed);
        if (soft && sig) {
          ++denseCases;
          denseWorse += sig->dense_ppl > soft->dense_ppl;
        }
      }
      const auto *soft = findRow(r, "softmax", pos, true, seed), *sig = findRow(r, "sigmoid", pos, true, seed);
      if (soft && sig) {
        ++hardCases;
        const double dSoft = std::abs(soft->hard_ppl / soft->dense_ppl - 1), dSig = std::abs(sig->hard_ppl / sig->dense_ppl - 1);
        sigmoidSmaller += dSig < dSoft;
        details << "   - " << pos << ", seed " << seed << ": |delta| sigmoid+gate " << fixed(100 * dSig, 2) << "% at "
                << percent(sig->live_share) << " live vs softmax+gate " << fixed(100 * dSoft, 2) << "% at " << percent(soft->live_share)
                << " live\n";
      }
      for (const auto* row : {soft, sig}) {
        if (!row) continue;
        bool beatsAll = true;  // learned gate vs H2O and KeyDiff on the same gated model
        for (size_t m = 0; m < s.matched_policies.size(); ++m)
          if (s.matched_policies[m] == "h2o" || s.matched_policies[m] == "keydiff") beatsAll = beatsAll && row->hard_ppl < row->matched_ppl[m];
        (row == sig ? sigmoidBeats : softmaxBeats) += beatsAll;
      }
      matchedCases += (soft && sig);
    }
  out << "1. *Sigmoid attention is worse as a dense language model.* Sigmoid's dense PPL is above softmax's in "
      << denseWorse << " of " << denseCases << " matched pairs (same encoding, gate and seed).\n"
      << "2. *Sigmoid-gated models delete KV entries with negligible PPL change against their own no-eviction reference.* "
      << "The sigmoid+gate model's |delta| is smaller than the softmax+gate model's in " << sigmoidSmaller << " of " << hardCases
      << " pairs:\n"
      << details.str()
      << "3. *Under the matched protocol, learned sigmoid gates beat H2O and KeyDiff; softmax gates do not uniformly.* "
      << "The learned gate's hard-eviction PPL is below both H2O's and KeyDiff's on the same model and live counts for "
      << "sigmoid+gate in " << sigmoidBeats << " of " << matchedCases << " cases and for softmax+gate in " << softmaxBeats << " of "
      << matchedCases << ".\n";
  return out.str();
}

void writeReport(const LiveCacheStudyResult& r, const std::filesystem::path& dir, const std::string& command) {
  const auto& s = r.settings;
  std::filesystem::create_directories(dir / "charts");
  std::string seeds;
  for (uint64_t seed : s.seeds) seeds += (seeds.empty() ? "" : ", ") + std::to_string(seed);

  // results.csv: one row per model and seed
  std::ofstream csv(dir / "results.csv");
  csv << "attention,positional,gate,seed,train_loss,dense_ppl,hard_ppl,delta_vs_dense,live_share";
  for (const auto& m : s.matched_policies) csv << "," << m << "_matched_ppl";
  csv << ",seconds\n";
  for (const auto& row : r.rows) {
    csv << row.attention << "," << row.positional << "," << (row.gated ? "learned" : "none") << "," << row.seed << ","
        << row.train_loss << "," << row.dense_ppl << "," << (row.gated ? std::to_string(row.hard_ppl) : "") << ","
        << (row.gated ? std::to_string(row.hard_ppl / row.dense_ppl - 1) : "") << "," << row.live_share;
    for (double p : row.matched_ppl) csv << "," << p;
    csv << "," << row.seconds << "\n";
  }
  std::ofstream sweep(dir / "sweep.csv");
  sweep << "model,seed,policy,budget_ratio,ppl,live_share\n";
  for (const auto& p : r.sweep) sweep << p.model << "," << p.seed << "," << p.policy << "," << p.budget_ratio << "," << p.ppl << "," << p.live_share << "\n";

  // charts: one per model and seed, a line per policy, the dense PPL dashed
  std::vector<std::string> charts;
  for (const auto& row : r.rows) {
    LineChart chart;
    chart.title = row.label() + ", seed " + std::to_string(row.seed) + ": PPL vs cache budget";
    chart.xLabel = "cache budget (share of the positions seen, per KV head)";
    chart.yLabel = "perplexity";
    chart.xPercent = true;
    std::map<std::string, ChartSeries> byPolicy;
    for (const auto& p : r.sweep)
      if (p.model == row.label() && p.seed == row.seed) {
        auto& series = byPolicy[p.policy];
        series.name = p.policy == "learned_gate" ? "learned_gate (top-B)" : p.policy;
        series.x.push_back(p.budget_ratio);
        series.y.push_back(p.ppl);
      }
    for (const auto& policy : s.sweep_policies)
      if (byPolicy.count(policy)) chart.series.push_back(byPolicy[policy]);
    ChartSeries dense{"dense (no eviction)", {s.budget_ratios.front(), s.budget_ratios.back()}, {row.dense_ppl, row.dense_ppl}, true};
    chart.series.push_back(dense);
    const std::string file = "charts/ppl_vs_budget_" + fileSafe(row.label()) + "_seed" + std::to_string(row.seed) + ".png";
    if (std::string why = writeLineChartPng(chart, (dir / file).string()); !why.empty()) throw CliError(why, 1);
    charts.push_back(file);
  }

  std::ofstream md(dir / "report.md");
  md << "# Live-cache study: soft gates, hard eviction (seed 000, toy scale)\n\n"
     << "The 2x2x2 grid {softmax, sigmoid} x {learned retention gate, none} x {RoPE, ALiBi}, each model trained on the "
        "toy language and evaluated on the same held-out sequences by teacher-forced decoding through the KV cache "
        "(the loss at each position sees only the entries live at that step).\n\n"
     << "- Command: `" << command << "`\n"
     << "- Seeds: " << seeds << " (weights, training data and the held-out text)\n"
     << "- Models: d_model " << s.d_model << ", " << s.n_layers << " layers, " << s.n_heads << " heads, d_ff " << s.d_ff << ", context "
     << s.context << "; " << s.steps << " steps of batch " << s.batch << ", lr " << s.lr << "\n"
     << "- Gated models: sparsity lambda " << s.sparsity << " on mean(g); hard eviction removes entries with g < " << s.threshold
     << " (entries kept still carry their soft g, as in training)\n"
     << "- Evaluation: " << s.eval_sequences << " sequences x " << s.context << " tokens\n"
     << "- Run time: " << duration(r.seconds) << " with " << s.threads << " threads\n\n";
  md << "| model | seed | dense PPL | PPL, hard eviction | delta vs own dense | live-cache share |";
  for (const auto& m : s.matched_policies) md << " " << m << " PPL (matched) |";
  md << "\n|---|---|---|---|---|---|";
  for (size_t i = 0; i < s.matched_policies.size(); ++i) md << "---|";
  md << "\n";
  for (const auto& row : r.rows) {
    md << "| " << row.label() << " | " << row.seed << " | " << num(row.dense_ppl) << " | " << (row.gated ? num(row.hard_ppl) : "-")
       << " | " << (row.gated ? signedPercent(row.hard_ppl / row.dense_ppl - 1) : "-") << " | " << percent(row.live_share)
       << (row.gated ? "" : " (twin's)") << " |";
    for (double p : row.matched_ppl) md << " " << num(p) << " |";
    md << "\n";
  }
  md << "\nLive-cache share: live entries summed over steps, layers and KV heads, over the positions seen (what the cache "
        "holds on average relative to keeping everything). Matched columns: the policy keeps, at every step, layer and KV "
        "head, exactly as many entries as the gated model kept under hard eviction; an ungated model gets the counts of "
        "its gated twin (same attention, encoding and seed), marked (twin's).\n\n"
     << "## Findings, as measured\n\n"
     << findings(r) << "\nThese are toy models trained for minutes; read the numbers as what this run measured, not as a "
                       "replication.\n\n"
     << "## PPL vs cache budget\n\nEach policy at fixed budgets (a share of the positions seen, per KV head; learned_gate "
        "keeps the top B by g). Data in sweep.csv.\n\n";
  for (const auto& file : charts) md << "![" << file << "](" << file << ")\n\n";
  if (!md) throw CliError("cannot write " + (dir / "report.md").string(), 1);
}

int runLiveCacheStudy(const Args& args) {
  const std::string out = args.required("out");
  const LiveCacheStudySettings settings = settingsFrom(args);
  const bool json = args.has("json");
  std::string command = "attnlab-cli study live-cache";
  for (const char* flag : {"quick"})
    if (args.has(flag)) command += std::string(" --") + flag;
  for (const char* flag : {"d-model", "layers", "heads", "d-ff", "context", "steps", "batch", "lr", "sparsity", "threshold", "seeds",
                           "eval-sequences", "budgets", "policies", "threads"})
    if (args.has(flag)) command += std::string(" --") + flag + " " + args.text(flag);
  LiveCacheStudyResult result;
  try {
    result = runLiveCacheStudy(settings, [&](const std::string& line) {
      if (!args.has("quiet")) std::cerr << line << std::endl;
    });
  } catch (const std::invalid_argument& e) {
    throw CliError(e.what());
  }
  {
    const OffscreenGui gui;
    writeReport(result, out, command + " --out " + out);
  }
  if (json) {
    Json rows = Json::array();
    for (const auto& row : result.rows)
      rows.push_back({{"model", row.label()}, {"seed", row.seed}, {"dense_ppl", numberOrNull(row.dense_ppl)},
                      {"hard_ppl", numberOrNull(row.hard_ppl)}, {"live_share", row.live_share}, {"matched_ppl", row.matched_ppl}});
    std::cout << Json{{"out", out}, {"seconds", result.seconds}, {"rows", rows}}.dump() << std::endl;
  } else {
    std::cout << "report written to " << out << "/report.md (" << duration(result.seconds) << ")" << std::endl;
  }
  return 0;
}

// Every study: adding one is its file and one line here (study all runs them in this order).
const std::vector<StudyEntry> kStudies = {
    {"live-cache", "R1: soft gates and hard eviction, against H2O, KeyDiff, window and SnapKV (seed 000)", runLiveCacheStudy},
    {"seed-checks", "R3 QK spectra by positional encoding and R7 head-drop order (seeds 000 and 001)", runSeedChecksStudy},
    {"extrapolation", "R6: accumulated rotations, RoPE and ALiBi beyond the training length (seed 000)", runExtrapolationStudy},
    {"sinks", "R8: the first token as a sink, the output gate and the learnable sink (seeds 000 and 001)", runSinksStudy},
    {"qk-runaway", "QK score runaway under fast learning and bf16, QK-norm and QK-guard (seed 001)", runQkRunawayStudy},
    {"low-precision", "R2: ALiBi under fp32, bf16 and fp16 and ALiBi-log: exact-zero weights and passkey retrieval (seed 000)", runLowPrecisionStudy},
};

std::vector<std::string> studyNames() {
  std::vector<std::string> names;
  for (const StudyEntry& s : kStudies) names.push_back(s.name);
  names.push_back("all");
  return names;
}

int runStudy(const Args& args) {
  const std::string name = args.text("subcommand");
  if (name == "all") return runAllStudies(args, kStudies, studyCommand().flags);
  for (const StudyEntry& s : kStudies)
    if (s.name == name) return s.run(args);
  throw CliError("no study '" + name + "'");
}

}  // namespace

Command studyCommand() {
  return {"study",
          "live-cache --out DIR [--quick] [--steps N] [--seeds 1,2] [--d-model N] [--layers N] [--heads N]\n"
          "    [--d-ff N] [--context N] [--batch N] [--lr X] [--sparsity L] [--threshold T] [--eval-sequences N]\n"
          "    [--budgets 12.5%,25%] [--policies a,b] [--threads N] [--json] [--quiet]\n"
          "  or: attnlab-cli study seed-checks --out DIR [--quick] [--seed S] [--threads N]\n"
          "  or: attnlab-cli study extrapolation --out DIR [--quick] [--steps N] [--seeds 1,2,3] [--threads N] [--quiet]\n"
          "  or: attnlab-cli study qk-runaway --out DIR [--quick] [--steps N] [--batch N] [--seeds 1,2,3] [--guard T] [--threads N] [--quiet]\n"
          "  or: attnlab-cli study sinks --out DIR [--quick] [--steps N] [--seeds 1,2,3] [--d-model N] [--layers N] [--context N]\n"
          "    [--batch N] [--threads N] [--quiet]\n"
          "  or: attnlab-cli study low-precision --out DIR [--quick] [--steps N] [--seeds 1,2,3] [--d-model N] [--layers N] [--heads N]\n"
          "    [--train-length N] [--batch N] [--threads N] [--quiet]\n"
          "  or: attnlab-cli study all --out DIR [--quick] [--seeds 1,2,3] [--studies a,b] [--resume] [--threads N] [--quiet]",
          "run a study from the seed papers and write a report folder",
          {{"subcommand", "NAME", "the study, given as the first argument: live-cache, seed-checks, extrapolation, sinks, qk-runaway, low-precision or all"},
           {"out", "DIR", "report folder (created): report.md, results.csv, sweep.csv, charts/*.png"},
           {"quick", "", "a tiny grid that runs in seconds (for tests; the numbers mean nothing)"},
           {"steps", "N", "training steps per model (default 250; extrapolation 400)"},
           {"seed", "S", "seed-checks: seed of every model and sample (default 1)"},
           {"seeds", "LIST", "seeds, comma separated; each trains the whole grid (default 1; extrapolation 1,2,3)"},
           {"d-model", "N", "model width (default 48)"},
           {"layers", "N", "blocks (default 2)"},
           {"heads", "N", "attention heads (default 4)"},
           {"d-ff", "N", "MLP width (default 128)"},
           {"context", "N", "sequence length for training and evaluation (default 48)"},
           {"batch", "N", "training batch (default 16)"},
           {"lr", "X", "peak learning rate (default 0.003)"},
           {"sparsity", "L", "lambda of the gated models' sparsity pressure on mean(g) (default 0.5)"},
           {"threshold", "T", "hard eviction removes entries with g below T (default 0.5)"},
           {"eval-sequences", "N", "held-out sequences per evaluation (default 24)"},
           {"budgets", "LIST", "budgets of the PPL-vs-budget sweep, as shares (default 12.5%,25%,50%,75%)"},
           {"policies", "LIST", "policies of the sweep (default window,streaming_llm,h2o,tova,keydiff,snapkv,random,learned_gate)"},
           {"train-length", "N", "low-precision: tokens per passkey training sequence, evaluated up to 8x (default 64)"},
           {"guard", "T", "qk-runaway: the QK-guard score threshold (default 20)"},
           {"threads", "N", "worker threads (default 2)"},
           {"json", "", "print one JSON object with the table's numbers"},
           {"studies", "LIST", "all: only these studies, comma separated (default every one)"},
           {"resume", "", "all: keep a study whose folder already holds findings.csv from an earlier run"},
           {"quiet", "", "no progress lines on stderr"}},
          "live-cache (seed 000): trains {softmax, sigmoid} x {learned retention gate, none} x {RoPE, ALiBi} on the toy\n"
          "language for every seed, then measures on the same held-out text: dense PPL, PPL with the gate applied hard,\n"
          "H2O, KeyDiff and window under the matched live-cache protocol, and PPL vs cache budget per policy.\n"
          "The defaults (250 steps per model) take about 8 CPU-minutes: under 15 minutes on 2 idle cores.\n\n"
          "seed-checks: (a) seed 000: trains the induction preset under RoPE, learned absolute positions and ALiBi,\n"
          "follows every head's QK spectrum and maps over training, checks the heads start at the Ginibre null and\n"
          "compares how rotational the strongest previous-token head is. (b) seed 001: head-drop curves by importance\n"
          "order on every model trained (plus recall, copy and sorting models in the full run). --quick: 3 short runs\n"
          "(about a minute on 2 cores) instead of 6 full ones (about 10 minutes). Writes report.md, spectra.csv,\n"
          "importance.csv and head_drop.csv.\n\n"
          "extrapolation (seed 000, R6): trains RoPE, ALiBi, ALiBi-log, accumulated rotation (learned and random) and no\n"
          "encoding on passkey and induction for each seed at the training length, evaluates each at 1, 2 and 4 times it\n"
          "and writes report.md (the table, and whether it agrees with seed 000), results.csv and charts/<task>.png.\n\n"
          "qk-runaway (seed 001): the induction preset with softmax, qk_norm and softmax under QK-guard (train.qk_guard)\n"
          "at the preset learning rate and 10x, with fp32 and bf16 scores, for each seed: each layer's largest score\n"
          "against the step (scores.csv, charts/scores_*.png), final loss and accuracy with 95% intervals over seeds,\n"
          "and which runs diverged. Default 150 steps of batch 16 per run, seeds 1,2,3.\n\n"
          "sinks (seed 001, R8): the toy language with softmax, softmax with an element-wise or head-wise output gate, and\n"
          "the learnable sink (softmax_sink), for each seed: the first token's share of attention per layer (mean and\n"
          "95% interval over seeds), the learnable sink's own share, a chart, results.csv and report.md.\n\n"
          "low-precision (seed 000, R2): passkey models with ALiBi trained with fp32, bf16 and fp16 scores and ALiBi-log\n"
          "with fp16 and fp32, for each seed (and the fp32 ALiBi model evaluated with fp16 scores), evaluated at 1, 2, 4\n"
          "and 8x the training length: the share of exactly zero visible weights per layer, head and distance\n"
          "(zero_share.csv, a chart per model) and passkey accuracy (results.csv, a chart), mean and 95% interval over\n"
          "seeds, checked against the paper (findings.csv). Defaults: d_model 64, 2 layers, 8 heads, 64-token sequences,\n"
          "800 steps of batch 32, seeds 1,2,3: about 30 minutes on 2 idle cores (0.26 CPU-seconds per step, measured on\n"
          "a shared, loaded machine).\n\n"
          "all: every study above in turn, each into DIR/<name> with the --quick, --seeds and --threads given, then\n"
          "DIR/report.md: one table of every finding (what the paper says, what this run measured with its interval,\n"
          "and the verdict agrees / partly / does not) linking each study's report, and DIR/findings.csv. A study\n"
          "that fails is named in the index and the others still run; --resume keeps studies already done.\n\n"
          "Every study writes findings.csv (finding,paper,measured,verdict) beside its report.",
          runStudy,
          studyNames()};
}

}  // namespace attnlab::cli
