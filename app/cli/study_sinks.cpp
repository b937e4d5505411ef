// study sinks (the gated-attention and learnable-sink papers): the first token as an attention sink,
// with and without the output gate (element-wise and head-wise, model/gates.h) and with the learnable
// sink (softmax_sink). Trains each model on the toy language for every seed, then measures on held-out
// sequences, per layer: the first token's share a_i0 (mean over heads and rows i >= 1), the learnable
// sink's own share (1 - row mass), and the output gate's mean. Writes report.md (mean and 95% interval
// over seeds, and how it compares with the papers' claims), results.csv and charts/sink_by_layer.png.
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "analysis/seed_interval.h"
#include "cli_error.h"
#include "format.h"
#include "io/checkpoint.h"
#include "io/config_json.h"
#include "report_chart.h"
#include "setup.h"
#include "study_sinks.h"
#include "study_support.h"

namespace attnlab::cli {
namespace {

struct Arm {
  std::string label, attention, gate;
};
const std::vector<Arm> kArms = {{"softmax", "softmax", "none"},
                                {"softmax + element-wise gate", "softmax", "elementwise"},
                                {"softmax + head-wise gate", "softmax", "headwise"},
                                {"learnable sink", "softmax_sink", "none"}};

struct Options {
  bool quick = false;
  int steps = 0, threads = 2, sequences = 0, dModel = 0, layers = 0, context = 0, batch = 0;
  std::vector<uint64_t> seeds;
};

struct LayerRow {
  const Arm* arm = nullptr;
  uint64_t seed = 0;
  int layer = 0;
  double firstToken = 0;  // mean a_i0 over heads and rows i >= 1
  double sinkShare = 0;   // mean 1 - sum_j a_ij: the learnable sink's weight (0 for softmax)
  double gateMean = NAN;  // mean output gate value, NaN without a gate
  double valLoss = 0;
};

ExperimentConfig configFor(const Options& o, const Arm& a, uint64_t seed) {
  ExperimentConfig c;
  if (std::string why = loadPreset("toy_language", c); !why.empty()) throw CliError(why, 1);
  if (o.quick) c.model.n_heads = 2;
  c.model.d_model = o.dModel;
  c.model.d_ff = 4 * o.dModel;
  c.model.n_layers = o.layers;
  c.model.context = o.context;
  c.train.batch = o.batch;
  c.model.attention = {a.attention};
  c.model.output_gate = a.gate;
  trainForStudy(c.train, o.steps, seed, o.threads);
  return c;
}

// The share of a row-averaged uniform map on the first token, rows 1..T-1: what no preference gives.
double uniformFirstTokenShare(int T) {
  double sum = 0;
  for (int i = 1; i < T; ++i) sum += 1.0 / (i + 1);
  return T > 1 ? sum / (T - 1) : NAN;
}

std::vector<LayerRow> measure(const Options& o, const Arm& a, uint64_t seed, int& seqLen) {
  Trainer trainer(configFor(o, a, seed));
  while (!trainer.finished()) trainer.trainStep();
  const double valLoss = trainer.evaluate(o.quick ? 1 : 4).loss;
  seqLen = trainer.sequenceLength();
  Rng rng = validationDataRng(seed);
  const Batch batch = trainer.task().sample(o.sequences, seqLen, Split::Validation, rng);
  const int layers = trainer.config().model.n_layers;
  std::vector<LayerRow> rows(layers);
  std::vector<double> gateSum(layers, 0);
  std::vector<long> cells(layers, 0), gateCells(layers, 0);
  for (int b = 0; b < batch.B; ++b) {
    const std::vector<int> tokens(batch.inputs.begin() + static_cast<long>(b) * batch.T, batch.inputs.begin() + static_cast<long>(b + 1) * batch.T);
    const Trace trace = trainer.trace(tokens);
    for (int l = 0; l < layers; ++l)
      for (const HeadTrace& h : trace.layers[l].heads) {
        for (int i = 1; i < h.weights.rows(); ++i) {
          rows[l].firstToken += h.weights(i, 0);
          rows[l].sinkShare += 1.0 - h.weights.row(i).head(i + 1).cast<double>().sum();
          ++cells[l];
        }
        for (float g : h.output_gate) gateSum[l] += g, ++gateCells[l];
      }
  }
  for (int l = 0; l < layers; ++l) {
    rows[l].arm = &a;
    rows[l].seed = seed;
    rows[l].layer = l;
    rows[l].firstToken /= std::max(1L, cells[l]);
    rows[l].sinkShare /= std::max(1L, cells[l]);
    if (gateCells[l]) rows[l].gateMean = gateSum[l] / gateCells[l];
    rows[l].valLoss = valLoss;
  }
  return rows;
}

template <class F>
SeedInterval intervalOf(const std::vector<LayerRow>& rows, const Arm& a, int layer, F value, ValueRange range = kShareRange) {
  std::vector<double> values;
  for (const LayerRow& r : rows)
    if (r.arm == &a && (layer < 0 || r.layer == layer)) values.push_back(value(r));
  return seedInterval95(values, range);
}

// Per arm and seed, the first-token share averaged over layers: the quantity the comparisons use.
SeedInterval meanOverLayers(const std::vector<LayerRow>& rows, const Arm& a, const std::vector<uint64_t>& seeds) {
  std::vector<double> values;
  for (uint64_t seed : seeds) {
    double sum = 0;
    int n = 0;
    for (const LayerRow& r : rows)
      if (r.arm == &a && r.seed == seed) sum += r.firstToken, ++n;
    if (n) values.push_back(sum / n);
  }
  return seedInterval95(values, kShareRange);
}

// Whether `x` is below the softmax baseline `base`, as the 95% intervals tell.
struct Comparison {
  std::string how, verdict;
};
Comparison compare(const SeedInterval& x, const SeedInterval& base) {
  if (!x.hasSpread() || !base.hasSpread())
    return x.mean < base.mean ? Comparison{"below softmax's (one seed: no interval)", "partly"}
                              : Comparison{"not below softmax's (one seed: no interval)", "does not"};
  if (x.high < base.low) return {"below softmax's, the intervals apart", "agrees"};
  if (x.low > base.high) return {"above softmax's, the intervals apart", "does not"};
  return x.mean < base.mean ? Comparison{"below softmax's in the mean, the intervals overlapping", "partly"}
                            : Comparison{"not below softmax's, the intervals overlapping", "does not"};
}

// The seeds' claims, one row each: a sink forms under softmax, the gates and the learnable sink lower it.
std::vector<Finding> findings(const std::vector<LayerRow>& rows, const Options& o, double uniform) {
  const SeedInterval base = meanOverLayers(rows, kArms[0], o.seeds);
  std::vector<Finding> out;
  const bool sink = base.hasSpread() ? base.low > uniform : base.mean > uniform;
  out.push_back({"softmax makes the first token a sink", "seed 000: heads put excess weight on the first token",
                 "first-token share " + intervalText(base) + " (mean over layers) against " + fixed(uniform, 3) + " for uniform attention",
                 sink && base.hasSpread() ? "agrees" : sink ? "partly" : "does not"});
  const char* claims[] = {"", "seed 001: gating mitigates attention sinks", "seed 001: gating mitigates attention sinks",
                          "seed 001: a learnable sink takes the weight a head would dump on the first token"};
  for (size_t i = 1; i < kArms.size(); ++i) {
    const SeedInterval x = meanOverLayers(rows, kArms[i], o.seeds);
    const Comparison c = compare(x, base);
    out.push_back({kArms[i].label + " lowers the first token's share", claims[i], intervalText(x) + ", " + c.how, c.verdict});
  }
  return out;
}

std::string resultsCsv(const std::vector<LayerRow>& rows) {
  std::ostringstream csv;
  csv << "model,attention,output_gate,seed,layer,first_token_share,learned_sink_share,output_gate_mean,val_loss\n";
  for (const LayerRow& r : rows)
    csv << r.arm->label << "," << r.arm->attention << "," << r.arm->gate << "," << r.seed << "," << r.layer << "," << fixed(r.firstToken, 5)
        << "," << fixed(r.sinkShare, 5) << "," << (std::isnan(r.gateMean) ? "" : fixed(r.gateMean, 5)) << "," << fixed(r.valLoss, 5) << "\n";
  return csv.str();
}

}  // namespace

int runSinksStudy(const Args& args) {
  const std::string out = args.required("out");
  Options o;
  o.quick = args.has("quick");
  o.steps = static_cast<int>(args.integer("steps", o.quick ? 20 : 400, 1, 1000000));
  o.threads = threadsFrom(args, 2);
  o.sequences = o.quick ? 2 : 16;
  o.dModel = static_cast<int>(args.integer("d-model", o.quick ? 16 : 64, 4, 1024));
  o.layers = static_cast<int>(args.integer("layers", o.quick ? 2 : 4, 1, 16));
  o.context = static_cast<int>(args.integer("context", o.quick ? 16 : 64, 4, 1024));
  o.batch = static_cast<int>(args.integer("batch", o.quick ? 4 : 16, 1, 4096));
  o.seeds = seedsFrom(args, o.quick ? std::vector<uint64_t>{1, 2} : std::vector<uint64_t>{1, 2, 3});
  makeStudyFolder(out);

  const auto start = std::chrono::steady_clock::now();
  std::vector<LayerRow> rows;
  int seqLen = 0;
  for (const Arm& a : kArms)
    for (uint64_t seed : o.seeds) {
      if (!args.has("quiet")) std::cerr << "study: " << a.label << ", seed " << seed << std::endl;
      try {
        for (const LayerRow& r : measure(o, a, seed, seqLen)) rows.push_back(r);
      } catch (const DivergenceError& e) {
        throw CliError(a.label + ", seed " + std::to_string(seed) + ": " + e.what(), kExitDiverged);
      } catch (const ConfigError& e) {
        throw CliError(a.label + ": " + e.what(), 1);
      }
    }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const ExperimentConfig shape = configFor(o, kArms[0], o.seeds.front());
  const int layers = shape.model.n_layers;

  OffscreenGui gui;
  LineChart chart{"First token's share of attention per layer (mean over seeds)", "layer", "mean a_i0 (rows i >= 1)", {}, false};
  for (const Arm& a : kArms) {
    ChartSeries series{a.label, {}, {}, false};
    for (int l = 0; l < layers; ++l) {
      series.x.push_back(l);
      series.y.push_back(intervalOf(rows, a, l, [](const LayerRow& r) { return r.firstToken; }).mean);
    }
    chart.series.push_back(series);
  }
  const double uniform = uniformFirstTokenShare(seqLen);
  chart.series.push_back({"uniform attention", {0, double(layers - 1)}, {uniform, uniform}, true});
  const std::string png = "charts/sink_by_layer.png";
  if (std::string why = writeLineChartPng(chart, out + "/" + png); !why.empty()) throw CliError(why, 1);

  std::string seeds;
  for (uint64_t s : o.seeds) seeds += (seeds.empty() ? "" : ", ") + std::to_string(s);
  std::ostringstream md;
  md << "# Attention sinks and the output gate (R8; seeds 000 and 001)\n\n"
     << "Seed 001 says gated attention mitigates attention sinks and adds a learnable sink; seed 000 studies the first "
        "token as a sink and how an output gate changes it. Here: the toy-language model with softmax attention, with "
        "an element-wise or a head-wise output gate (o_i <- o_i * sigmoid(W_g x_i + b_g)), and with the learnable sink "
        "(a_ij = exp(s_ij) / (exp(z_h) + sum_j' exp(s_ij')), z_h learned per head), each trained for every seed, then "
        "measured on " << o.sequences << " held-out sequences of " << seqLen << " tokens.\n\n"
     << "- Command: `" << studyCommand(args, "sinks", {"quick", "steps", "seeds", "d-model", "layers", "context", "batch", "threads"}) << " --out " << out << "`\n"
     << "- Seeds: " << seeds << "\n"
     << "- Model: d_model " << shape.model.d_model << ", " << layers << " layers, " << shape.model.n_heads << " heads, d_ff " << shape.model.d_ff
     << ", context " << shape.model.context << ", learned positions; " << o.steps << " steps of batch " << shape.train.batch << ", lr "
     << shape.train.lr << "\n"
     << "- Machine: " << machineLine() << ", " << threadCount(o.threads) << "; run time " << duration(seconds) << "\n\n"
     << "First-token share: a_i0 averaged over heads and rows i >= 1 (row 0 has only itself to attend to), as the weights "
        "are (for the learnable sink the rows sum to 1 minus the sink's share). Uniform attention would give "
     << fixed(uniform, 3) << ". Mean over seeds with the 95% t-interval in brackets.\n\n"
     << "| model | val loss |";
  for (int l = 0; l < layers; ++l) md << " layer " << l << " |";
  md << " learned sink's share | output gate mean |\n| --- | --- |";
  for (int l = 0; l < layers; ++l) md << " --- |";
  md << " --- | --- |\n";
  for (const Arm& a : kArms) {
    md << "| " << a.label << " | " << intervalText(intervalOf(rows, a, 0, [](const LayerRow& r) { return r.valLoss; }, kUnbounded)) << " |";
    for (int l = 0; l < layers; ++l) md << " " << intervalText(intervalOf(rows, a, l, [](const LayerRow& r) { return r.firstToken; })) << " |";
    md << " " << (a.attention == "softmax_sink" ? intervalText(intervalOf(rows, a, -1, [](const LayerRow& r) { return r.sinkShare; })) : "-")
       << " | " << (a.gate != "none" ? intervalText(intervalOf(rows, a, -1, [](const LayerRow& r) { return r.gateMean; })) : "-") << " |\n";
  }
  const std::vector<Finding> checked = findings(rows, o, uniform);
  md << "\n![" << png << "](" << png << ")\n\n## Against the paper\n\n" << findingsMarkdown(checked)
     << "\nShares are averaged over the layers per seed, then over seeds. The learnable sink's own share of each row (all "
        "layers and seeds): "
     << intervalText(intervalOf(rows, kArms[3], -1, [](const LayerRow& r) { return r.sinkShare; }))
     << ".\n\nSmall models trained for minutes on a toy grammar: the direction at this scale, not a measurement of the "
        "papers' effect sizes.\n";
  if (o.quick) md << "\n(--quick: tiny models trained a few steps; the numbers mean nothing.)\n";
  for (const auto& [name, text] : {std::pair<std::string, std::string>{"report.md", md.str()}, {"results.csv", resultsCsv(rows)},
                                                          {"findings.csv", findingsCsv(checked)}})
    if (std::string why = writeFileAtomic(out + "/" + name, text); !why.empty()) throw CliError(why, 1);
  std::cout << "report written to " << out << "/report.md (" << duration(seconds) << ")" << std::endl;
  return 0;
}

}  // namespace attnlab::cli
