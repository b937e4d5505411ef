// study live-cache (the soft-to-hard eviction paper's study): {softmax, sigmoid} x {learned retention
// gate, none} x {RoPE, ALiBi} trained on the toy language for every seed (kv/live_cache_study.h), then
// per model on the same held-out text: dense PPL, PPL with the gate applied hard, the matched-protocol
// PPL of H2O, KeyDiff, window and SnapKV, and PPL vs cache budget per policy. Every table cell is a
// mean with its 95% interval over seeds, and the paper's claims are checked one by one against those
// intervals.
#include "study_live_cache.h"

#include <cmath>
#include <filesystem>
#include <functional>
#include <iostream>
#include <sstream>

#include "analysis/seed_interval.h"
#include "cli_error.h"
#include "format.h"
#include "io/checkpoint.h"
#include "kv/live_cache_study.h"
#include "list_flags.h"
#include "report_chart.h"
#include "study_support.h"
#include "train/trainer.h"

namespace attnlab::cli {
namespace {

const std::vector<std::string> kFlags = {"quick", "d-model", "layers", "heads", "d-ff", "context", "steps", "batch", "lr", "sparsity",
                                         "threshold", "seeds", "eval-sequences", "budgets", "policies", "threads"};
// Claim 2's "negligible": hard eviction may cost at most this much PPL, and must leave at most
// kDeletedEnough of the cache live for the claim to be about deleting entries at all.
constexpr double kNegligible = 0.01, kDeletedEnough = 0.9;

// The engine's defaults (the full study), --quick, then each flag.
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
    s.seeds = {1, 2};
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
  s.seeds = seedsFrom(args, s.seeds);
  if (args.has("budgets")) s.budget_ratios = parseBudgetShares(args.text("budgets"));
  if (args.has("policies")) s.sweep_policies = splitList(args.text("policies"));
  if (std::string why = validateStudy(s); !why.empty()) throw CliError(why);
  return s;
}

// "+29.23% [+20.10%, +38.36%]": a relative change (or, unsigned, a share) with its 95% interval.
std::string percentText(const SeedInterval& r, bool sign, int decimals = 2) {
  if (r.n == 0) return "n/a";
  auto one = [&](double v) {
    std::string text = fixed(100 * v, decimals);
    if (text.find_first_not_of("-0.") == std::string::npos && text[0] == '-') text.erase(0, 1);  // "-0.00" rounds to zero
    return (sign && text[0] != '-' ? "+" : "") + text + "%";
  };
  std::string text = one(r.mean);
  if (r.hasSpread()) text += " [" + one(r.low) + ", " + one(r.high) + "]";
  if (r.skipped) text += " (" + std::to_string(r.skipped) + " diverged)";
  return text;
}

std::string csvNumber(double v) {
  if (std::isfinite(v)) return fixed(v, 6);
  return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
}

std::string fileSafe(std::string s) {
  for (char& c : s)
    if (c == '/' || c == '+') c = '_';
  return s;
}

// The grid's models in the order the engine trained them (for the first seed).
std::vector<std::string> modelLabels(const LiveCacheStudyResult& r) {
  std::vector<std::string> labels;
  for (const auto& row : r.rows)
    if (row.seed == r.settings.seeds.front()) labels.push_back(row.label());
  return labels;
}

using RowValue = std::function<double(const LiveCacheStudyRow&)>;

// `value` of the model `label`, one per seed, as mean and 95% interval.
SeedInterval overSeeds(const LiveCacheStudyResult& r, const std::string& label, const RowValue& value, ValueRange range = kUnbounded) {
  std::vector<double> values;
  for (const auto& row : r.rows)
    if (row.label() == label) values.push_back(value(row));
  return seedInterval95(values, range);
}

double hardDelta(const LiveCacheStudyRow& row) { return row.hard_ppl / row.dense_ppl - 1; }

// --- the table ---------------------------------------------------------------------------------

struct Column {
  std::string header;
  RowValue value;
  enum class Text { ppl, change, share } text;
  bool gatedOnly;
};

std::vector<Column> columnsOf(const LiveCacheStudySettings& s) {
  std::vector<Column> columns = {
      {"dense PPL", [](const LiveCacheStudyRow& r) { return r.dense_ppl; }, Column::Text::ppl, false},
      {"PPL, hard eviction", [](const LiveCacheStudyRow& r) { return r.hard_ppl; }, Column::Text::ppl, true},
      {"delta vs own dense", hardDelta, Column::Text::change, true},
      {"live-cache share", [](const LiveCacheStudyRow& r) { return r.live_share; }, Column::Text::share, false}};
  for (size_t m = 0; m < s.matched_policies.size(); ++m)
    columns.push_back({s.matched_policies[m] + " PPL (matched)", [m](const LiveCacheStudyRow& r) { return r.matched_ppl[m]; },
                       Column::Text::ppl, false});
  return columns;
}

std::string cellText(const SeedInterval& interval, Column::Text text) {
  switch (text) {
    case Column::Text::ppl: return intervalText(interval);
    case Column::Text::change: return percentText(interval, true);
    case Column::Text::share: return percentText(interval, false, 1);
  }
  return {};
}

std::string resultsTable(const LiveCacheStudyResult& r) {
  const std::vector<Column> columns = columnsOf(r.settings);
  std::ostringstream md;
  md << "| model |";
  for (const Column& c : columns) md << " " << c.header << " |";
  md << "\n|---|";
  for (size_t i = 0; i < columns.size(); ++i) md << "---|";
  md << "\n";
  for (const std::string& label : modelLabels(r)) {
    const bool gated = label.find("+gate") != std::string::npos;
    md << "| " << label << " |";
    for (const Column& c : columns)
      md << " " << (c.gatedOnly && !gated ? "-" : cellText(overSeeds(r, label, c.value, c.text == Column::Text::share ? kShareRange : kUnbounded), c.text))
         << (c.text == Column::Text::share && !gated ? " (twin's)" : "") << " |";
    md << "\n";
  }
  return md.str();
}

std::string resultsCsv(const LiveCacheStudyResult& r) {
  std::ostringstream csv;
  csv << "attention,positional,gate,seed,train_loss,dense_ppl,hard_ppl,delta_vs_dense,live_share";
  for (const auto& m : r.settings.matched_policies) csv << "," << m << "_matched_ppl";
  csv << ",seconds\n";
  for (const auto& row : r.rows) {
    csv << row.attention << "," << row.positional << "," << (row.gated ? "learned" : "none") << "," << row.seed << ","
        << csvNumber(row.train_loss) << "," << csvNumber(row.dense_ppl) << "," << (row.gated ? csvNumber(row.hard_ppl) : "") << ","
        << (row.gated ? csvNumber(hardDelta(row)) : "") << "," << csvNumber(row.live_share);
    for (double p : row.matched_ppl) csv << "," << csvNumber(p);
    csv << "," << fixed(row.seconds, 1) << "\n";
  }
  return csv.str();
}

std::string sweepCsv(const LiveCacheStudyResult& r) {
  std::ostringstream csv;
  csv << "model,seed,policy,budget_ratio,ppl,live_share\n";
  for (const auto& p : r.sweep)
    csv << p.model << "," << p.seed << "," << p.policy << "," << p.budget_ratio << "," << csvNumber(p.ppl) << "," << csvNumber(p.live_share)
        << "\n";
  return csv.str();
}

// --- the findings ------------------------------------------------------------------------------

// One comparison a claim rests on (an encoding, or an encoding and a baseline), with what its
// interval says: on the claim's side of the bound, on the other side, or straddling it.
enum class Evidence { supports, contradicts, undecided };
struct Case {
  std::string text;  // "RoPE: +3.20% [+1.10%, +5.30%]"
  Evidence evidence;
};

// The claim "value < bound" (or "value > bound") judged by the 95% interval; one seed decides nothing.
Evidence judge(const SeedInterval& r, double bound, bool claimBelow) {
  if (!r.hasSpread() || r.skipped) return Evidence::undecided;
  if (claimBelow ? r.high < bound : r.low > bound) return Evidence::supports;
  if (claimBelow ? r.low > bound : r.high < bound) return Evidence::contradicts;
  return Evidence::undecided;
}

// agrees when every case supports the claim; does not when some case contradicts it and none supports it.
std::string everyCase(const std::vector<Case>& cases) {
  int supports = 0, contradicts = 0;
  for (const Case& c : cases) supports += c.evidence == Evidence::supports, contradicts += c.evidence == Evidence::contradicts;
  if (supports == static_cast<int>(cases.size())) return "agrees";
  return contradicts > 0 && supports == 0 ? "does not" : "partly";
}

// For "not uniformly": agrees when some case supports it; does not when every case contradicts it.
std::string someCase(const std::vector<Case>& cases) {
  int supports = 0, contradicts = 0;
  for (const Case& c : cases) supports += c.evidence == Evidence::supports, contradicts += c.evidence == Evidence::contradicts;
  if (supports > 0) return "agrees";
  return contradicts == static_cast<int>(cases.size()) ? "does not" : "partly";
}

std::string joined(const std::string& lead, const std::vector<Case>& cases) {
  std::string text = lead;
  for (size_t i = 0; i < cases.size(); ++i) text += (i ? "; " : "") + cases[i].text;
  return text;
}

const LiveCacheStudyRow* findRow(const LiveCacheStudyResult& r, const std::string& attention, const std::string& positional, bool gated,
                                 uint64_t seed) {
  for (const auto& row : r.rows)
    if (row.attention == attention && row.positional == positional && row.gated == gated && row.seed == seed) return &row;
  return nullptr;
}

// Per seed, f(row of model a, row of model b) for the same encoding and seed.
template <class F>
SeedInterval paired(const LiveCacheStudyResult& r, const std::string& pos, const std::string& attentionA, bool gatedA,
                    const std::string& attentionB, bool gatedB, F f) {
  std::vector<double> values;
  for (uint64_t seed : r.settings.seeds) {
    const auto *a = findRow(r, attentionA, pos, gatedA, seed), *b = findRow(r, attentionB, pos, gatedB, seed);
    if (a && b) values.push_back(f(*a, *b));
  }
  return seedInterval95(values);
}

const std::vector<std::pair<std::string, std::string>> kEncodings = {{"rope", "RoPE"}, {"alibi", "ALiBi"}};

int matchedIndex(const LiveCacheStudySettings& s, const std::string& policy) {
  for (size_t m = 0; m < s.matched_policies.size(); ++m)
    if (s.matched_policies[m] == policy) return static_cast<int>(m);
  throw CliError("the matched protocol is missing " + policy, 1);
}

// The learned gate's hard-eviction PPL over H2O's and KeyDiff's at the same live counts, minus 1.
std::vector<Case> gateAgainstPostHoc(const LiveCacheStudyResult& r, const std::string& attention, bool claimBelow) {
  std::vector<Case> cases;
  for (const auto& [pos, name] : kEncodings)
    for (const auto& [policy, policyName] : std::vector<std::pair<std::string, std::string>>{{"h2o", "H2O"}, {"keydiff", "KeyDiff"}}) {
      const int m = matchedIndex(r.settings, policy);
      const SeedInterval x =
          overSeeds(r, attention + "+gate/" + pos, [m](const LiveCacheStudyRow& row) { return row.hard_ppl / row.matched_ppl[m] - 1; });
      // claimBelow: the gate's PPL is lower; otherwise the case the claim needs is the gate losing (above 0)
      cases.push_back({name + " vs " + policyName + ": " + percentText(x, true), judge(x, 0, claimBelow)});
    }
  return cases;
}

std::vector<Finding> findingsOf(const LiveCacheStudyResult& r) {
  std::vector<Case> dense, eviction;
  for (const auto& [pos, name] : kEncodings) {
    const SeedInterval worse =
        paired(r, pos, "sigmoid", false, "softmax", false, [](const LiveCacheStudyRow& a, const LiveCacheStudyRow& b) { return a.dense_ppl / b.dense_ppl - 1; });
    dense.push_back({name + ": " + percentText(worse, true), judge(worse, 0, false)});

    const std::string label = "sigmoid+gate/" + pos;
    const SeedInterval delta = overSeeds(r, label, hardDelta);
    const SeedInterval live = overSeeds(r, label, [](const LiveCacheStudyRow& row) { return row.live_share; }, kShareRange);
    Evidence e = judge(delta, kNegligible, true);
    if (e == Evidence::supports && !(live.high < kDeletedEnough)) e = Evidence::undecided;  // too little deleted to count
    eviction.push_back({name + ": " + percentText(delta, true) + " at " + percentText(live, false, 1) + " live", e});
  }
  const std::vector<Case> sigmoidGate = gateAgainstPostHoc(r, "sigmoid", true), softmaxGate = gateAgainstPostHoc(r, "softmax", false);
  return {
      {"1. Sigmoid attention is worse as a dense language model",
       "sigmoid attention is worse as a dense language model (GPT-2 scale, OpenWebText)",
       joined("dense PPL of sigmoid over softmax, ungated, per seed: ", dense), everyCase(dense)},
      {"2. Sigmoid-gated models delete KV entries with negligible PPL change",
       "sigmoid-gated models delete KV entries with negligible PPL change relative to their own no-eviction references",
       joined("sigmoid+gate, hard-eviction PPL over its own dense PPL (negligible: at most +" + fixed(100 * kNegligible, 0) + "%, with under " +
                  fixed(100 * kDeletedEnough, 0) + "% of the cache live): ",
              eviction),
       everyCase(eviction)},
      {"3a. Learned sigmoid gates beat H2O and KeyDiff (matched)",
       "under a matched live-cache protocol, learned sigmoid gates obtain lower PPL than H2O and KeyDiff",
       joined("sigmoid+gate, hard-eviction PPL over the policy's at the same live counts: ", sigmoidGate), everyCase(sigmoidGate)},
      {"3b. Softmax gates do not uniformly beat H2O and KeyDiff (matched)",
       "softmax gates do not uniformly beat these post-hoc methods",
       joined("softmax+gate, hard-eviction PPL over the policy's at the same live counts: ", softmaxGate), someCase(softmaxGate)}};
}

// --- charts ------------------------------------------------------------------------------------

// One chart per model: each policy's PPL vs budget, the mean over seeds with its 95% band, and the
// model's dense PPL (mean over seeds) dashed.
std::vector<std::string> writeCharts(const LiveCacheStudyResult& r, const std::string& out) {
  const auto& s = r.settings;
  std::vector<std::string> files;
  for (const std::string& label : modelLabels(r)) {
    LineChart chart;
    chart.title = label + ": PPL vs cache budget (mean over seeds, 95% band)";
    chart.xLabel = "cache budget (share of the positions seen, per KV head)";
    chart.yLabel = "perplexity";
    chart.xPercent = true;
    for (const auto& policy : s.sweep_policies) {
      ChartSeries series{policy == "learned_gate" ? "learned_gate (top-B)" : policy, {}, {}, false, {}, {}};
      for (double ratio : s.budget_ratios) {
        std::vector<double> values;
        for (const auto& p : r.sweep)
          if (p.model == label && p.policy == policy && p.budget_ratio == ratio) values.push_back(p.ppl);
        if (values.empty()) continue;
        const SeedInterval interval = seedInterval95(values);
        series.x.push_back(ratio);
        series.y.push_back(interval.mean);
        if (interval.hasSpread()) series.low.push_back(interval.low), series.high.push_back(interval.high);
      }
      if (series.x.empty()) continue;
      if (series.low.size() != series.x.size()) series.low.clear(), series.high.clear();  // one seed: no band
      chart.series.push_back(series);
    }
    const double dense = overSeeds(r, label, [](const LiveCacheStudyRow& row) { return row.dense_ppl; }).mean;
    chart.series.push_back({"dense (no eviction)", {s.budget_ratios.front(), s.budget_ratios.back()}, {dense, dense}, true, {}, {}});
    const std::string file = "charts/ppl_vs_budget_" + fileSafe(label) + ".png";
    if (std::string why = writeLineChartPng(chart, out + "/" + file); !why.empty()) throw CliError(why, 1);
    files.push_back(file);
  }
  return files;
}

// --- the report --------------------------------------------------------------------------------

std::string reportMarkdown(const LiveCacheStudyResult& r, const std::string& command, bool quick, const std::vector<Finding>& findings,
                           const std::vector<std::string>& charts) {
  const auto& s = r.settings;
  std::string seeds;
  for (uint64_t seed : s.seeds) seeds += (seeds.empty() ? "" : ", ") + std::to_string(seed);
  std::ostringstream md;
  md << "# Live-cache study: soft gates, hard eviction (R1, seed 000)\n\n"
     << "Seed 000 trains GPT-2-scale models on OpenWebText in a 2x2x2 grid {softmax, sigmoid} x {learned retention gate, "
        "none} x {two positional encodings} and asks whether a gate trained soft transfers to hard KV deletion. Here the same "
        "grid with RoPE and ALiBi, each model trained on the toy language for every seed and evaluated on the same held-out "
        "sequences by teacher-forced decoding through the KV cache (the loss at each position sees only the entries live at "
        "that step).\n\n"
     << "- Command: `" << command << "`\n"
     << "- Seeds: " << seeds << " (weights, training data and the held-out text)\n"
     << "- Models: d_model " << s.d_model << ", " << s.n_layers << (s.n_layers == 1 ? " layer, " : " layers, ") << s.n_heads << " heads, d_ff " << s.d_ff << ", context "
     << s.context << "; " << s.steps << " steps of batch " << s.batch << ", lr " << s.lr << "\n"
     << "- Gated models: sparsity lambda " << s.sparsity << " on mean(g); hard eviction removes entries with g < " << s.threshold
     << " (entries kept still carry their soft g, as in training)\n"
     << "- Evaluation: " << s.eval_sequences << " sequences x " << s.context << " tokens\n"
     << "- Machine: " << machineLine() << ", " << threadCount(s.threads) << "; run time " << duration(r.seconds) << "\n"
     << "- Scale: the defaults (d_model 64, 4 layers, 2,000 steps, 3 seeds: 24 models) are the largest that fits in about "
        "half an hour on 2 idle cores (at 400 steps the study took 12m22s on 1 thread beside a build); d_model 128 with "
        "d_ff 512 costs about 3-4 times as much per step.\n\n";
  if (quick) md << "**--quick: tiny models trained a few steps; the numbers mean nothing.**\n\n";
  md << "Each cell: the mean over seeds with the 95% t-interval in brackets (per-seed values in results.csv; the delta is "
        "taken per seed, then averaged).\n\n"
     << resultsTable(r)
     << "\nLive-cache share: live entries summed over steps, layers and KV heads, over the positions seen (what the cache "
        "holds on average relative to keeping everything). Matched columns: the policy keeps, at every step, layer and KV "
        "head, exactly as many entries as the gated model kept under hard eviction; an ungated model gets the counts of "
        "its gated twin (same attention, encoding and seed), marked (twin's).\n\n"
     << "## Against the paper\n\n"
     << findingsMarkdown(findings)
     << "\nEach claim rests on per-seed comparisons (one per encoding, and per baseline for 3a and 3b), each judged by its "
        "95% interval over seeds: it supports the claim when the interval lies on the claim's side, contradicts it when it "
        "lies on the other side, and decides nothing when it straddles the bound (or with one seed). A claim agrees when "
        "every comparison supports it, does not when some contradict it and none supports it, and is partly borne out "
        "otherwise; 3b (\"not uniformly\") agrees when some comparison shows the softmax gate losing beyond its interval. "
        "These are small models trained for minutes on a toy grammar: what this run measured, not the paper's effect "
        "sizes.\n\n"
     << "## PPL vs cache budget\n\nEach policy at fixed budgets (a share of the positions seen, per KV head; learned_gate "
        "keeps the top B by g): the mean over seeds and its 95% band. The bands are wide where the seeds' models differ in "
        "their dense PPL as a whole; the comparisons above are paired within each seed. Data in sweep.csv.\n\n";
  for (const auto& file : charts) md << "![" << file << "](" << file << ")\n\n";
  return md.str();
}

}  // namespace

int runLiveCacheStudy(const Args& args) {
  const std::string out = args.required("out");
  const LiveCacheStudySettings settings = settingsFrom(args);
  makeStudyFolder(out);
  LiveCacheStudyResult result;
  try {
    result = attnlab::runLiveCacheStudy(settings, [&](const std::string& line) {
      if (!args.has("quiet")) std::cerr << "study: " << line << std::endl;
    });
  } catch (const DivergenceError& e) {
    throw CliError(std::string("live-cache: ") + e.what(), kExitDiverged);
  } catch (const std::invalid_argument& e) {
    throw CliError(e.what());
  }
  std::vector<std::string> charts;
  {
    const OffscreenGui gui;
    charts = writeCharts(result, out);
  }
  const std::vector<Finding> findings = findingsOf(result);
  const std::string command = studyCommand(args, "live-cache", kFlags) + " --out " + out;
  for (const auto& [name, text] : std::vector<std::pair<std::string, std::string>>{
           {"results.csv", resultsCsv(result)},
           {"sweep.csv", sweepCsv(result)},
           {"findings.csv", findingsCsv(findings)},
           {"report.md", reportMarkdown(result, command, args.has("quick"), findings, charts)}})
    if (std::string why = writeFileAtomic(out + "/" + name, text); !why.empty()) throw CliError(why, 1);
  if (args.has("json")) {
    Json rows = Json::array();
    for (const auto& row : result.rows)
      rows.push_back({{"model", row.label()}, {"seed", row.seed}, {"dense_ppl", numberOrNull(row.dense_ppl)},
                      {"hard_ppl", numberOrNull(row.hard_ppl)}, {"live_share", row.live_share}, {"matched_ppl", row.matched_ppl}});
    Json verdicts = Json::array();
    for (const Finding& f : findings) verdicts.push_back({{"finding", f.finding}, {"measured", f.measured}, {"verdict", f.verdict}});
    std::cout << Json{{"out", out}, {"seconds", result.seconds}, {"rows", rows}, {"findings", verdicts}}.dump() << std::endl;
  } else {
    std::cout << "report written to " << out << "/report.md (" << duration(result.seconds) << ")" << std::endl;
  }
  return 0;
}

}  // namespace attnlab::cli
