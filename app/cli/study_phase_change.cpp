// study phase-change (Olsson et al.'s induction heads, and the momentum-attention paper): induction
// heads forming in attention-only models. Trains the induction preset with 2 softmax layers, 1 softmax
// layer and 1 momentum layer (momentum attention's high-passed queries and keys) for every seed,
// measuring every K steps the training and validation loss, the in-context accuracy on the repeat half
// (the task's answers) and the strongest head's induction score on fixed validation sequences of the
// task, located by content (analysis/content_induction.h), as the repeat's offset varies. The phase
// change of each run is detected by the rule of analysis/phase_change.h. Writes report.md (the detected
// step per model with 95% intervals over seeds, and the findings against the papers), results.csv,
// curves.csv, findings.csv and charts/{induction,loss}_<model>.png.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "analysis/content_induction.h"
#include "analysis/layer_diagnostics_probe.h"
#include "analysis/phase_change.h"
#include "analysis/seed_interval.h"
#include "cli_error.h"
#include "format.h"
#include "io/checkpoint.h"
#include "io/config_json.h"
#include "report_chart.h"
#include "setup.h"
#include "study_phase_change.h"
#include "study_support.h"

namespace attnlab::cli {
namespace {

struct Arm {
  std::string label, file;  // label: no comma (a CSV field); file: the charts' name part
  int layers;
  std::string attention;
};
const std::vector<Arm> kArms = {{"2-layer softmax", "2_layer_softmax", 2, "softmax"},
                                {"1-layer softmax", "1_layer_softmax", 1, "softmax"},
                                {"1-layer momentum", "1_layer_momentum", 1, "momentum"}};

// The detector's margins: the least rise of the strongest head's induction score (an attention
// weight) and of the in-context accuracy that counts as a phase change.
const PhaseChangeRule kInductionRule{0.2, 1};
const PhaseChangeRule kAccuracyRule{0.2, 1};
// "Abrupt": the middle half of the induction score's rise (25% to 75%) takes less than this share of the run.
constexpr double kAbruptShare = 0.1;
// Measured with --steps 1500 --seeds 1,2 --threads 1: 296 CPU-seconds, scaled to the defaults (x 3).
const char* const kDefaultCost =
    "about 15 CPU-minutes (from a 1500-step, 2-seed run on one thread, timed on a shared, loaded machine), so well under 30 "
    "minutes on 2 idle cores";

struct Options {
  bool quick = false;
  int steps = 0, batch = 0, dModel = 0, every = 0, threads = 2, evalBatches = 0, probeSequences = 0;
  double gamma = 0;
  std::vector<uint64_t> seeds;
};

struct CurvePoint {
  int step = 0;
  double trainLoss = NAN;  // mean over the steps since the last point (none at step 0)
  double valLoss = NAN, accuracy = NAN;
  double induction = NAN, previousToken = NAN;  // the strongest head's, over all layers
  int inductionLayer = 0;
};

struct Run {
  const Arm* arm = nullptr;
  uint64_t seed = 0;
  std::vector<CurvePoint> curve;
  PhaseChange induction, accuracy;
  double seconds = 0;
  int seqLen = 0;
  const CurvePoint& last() const { return curve.back(); }
};

ExperimentConfig configFor(const Options& o, const Arm& a, uint64_t seed) {
  ExperimentConfig c;
  if (std::string why = loadPreset("induction", c); !why.empty()) throw CliError(why, 1);
  if (o.quick) c.model.n_heads = 2;
  c.model.d_model = o.dModel;
  c.model.n_layers = a.layers;
  c.model.attention = {a.attention};
  if (a.attention == "momentum") c.model.attention_settings["momentum_gamma"] = o.gamma;
  c.train.batch = o.batch;
  trainForStudy(c.train, o.steps, seed, o.threads);
  return c;
}

// Fixed validation sequences of the task (the same for every step, model and seed: the curves show
// the model changing) with each row's induction target; sequences without any are left out.
struct Probe {
  std::vector<std::vector<int>> tokens, targets;
};
Probe probeFor(const Trainer& trainer, int sequences) {
  Rng rng(kLayerDiagnosticsSeed);
  const Batch batch = trainer.task().sample(sequences, trainer.sequenceLength(), Split::Validation, rng);
  Probe p;
  for (int b = 0; b < batch.B; ++b) {
    const std::vector<int> tokens(batch.inputs.begin() + static_cast<long>(b) * batch.T, batch.inputs.begin() + static_cast<long>(b + 1) * batch.T);
    const std::vector<int> targets = inductionTargets(tokens);
    if (std::any_of(targets.begin(), targets.end(), [](int t) { return t >= 0; })) p.tokens.push_back(tokens), p.targets.push_back(targets);
  }
  return p;
}

// The strongest head's induction score (per sequence the mean over its rows with a target, then the
// mean over sequences, so every repeat length counts alike: a head attending a fixed distance back
// scores only on the sequences whose repeat sits at that distance) and previous-token score.
void headScores(const Trainer& trainer, const Probe& probe, CurvePoint& p) {
  std::vector<std::vector<double>> induction, previous;  // [layer][head]: summed per-sequence scores, summed rows
  long previousRows = 0;
  for (size_t s = 0; s < probe.tokens.size(); ++s) {
    const Trace trace = trainer.trace(probe.tokens[s]);
    induction.resize(trace.layers.size()), previous.resize(trace.layers.size());
    for (size_t l = 0; l < trace.layers.size(); ++l) {
      const auto& heads = trace.layers[l].heads;
      induction[l].resize(heads.size()), previous[l].resize(heads.size());
      for (size_t h = 0; h < heads.size(); ++h) {
        const ContentInduction c = contentInductionScore(heads[h].weights, probe.targets[s]);
        induction[l][h] += c.score;
        for (int i = 1; i < heads[h].weights.rows(); ++i) previous[l][h] += heads[h].weights(i, i - 1);
      }
    }
    previousRows += static_cast<long>(probe.tokens[s].size()) - 1;
  }
  p.induction = p.previousToken = 0;
  for (size_t l = 0; l < induction.size(); ++l)
    for (size_t h = 0; h < induction[l].size(); ++h) {
      const double score = induction[l][h] / probe.tokens.size();
      if (score > p.induction) p.induction = score, p.inductionLayer = static_cast<int>(l);
      p.previousToken = std::max(p.previousToken, previous[l][h] / std::max(1L, previousRows));
    }
}

CurvePoint measurePoint(Trainer& trainer, const Probe& probe, const Options& o, double trainLoss) {
  CurvePoint p;
  p.step = trainer.stepsDone();
  p.trainLoss = trainLoss;
  const EvalResult eval = trainer.evaluate(o.evalBatches);
  p.valLoss = eval.loss;
  p.accuracy = eval.accuracy;
  headScores(trainer, probe, p);
  return p;
}

Run train(const Options& o, const Arm& a, uint64_t seed) {
  const auto start = std::chrono::steady_clock::now();
  Run run{&a, seed, {}, {}, {}, 0, 0};
  Trainer trainer(configFor(o, a, seed));
  run.seqLen = trainer.sequenceLength();
  const Probe probe = probeFor(trainer, o.probeSequences);
  run.curve.push_back(measurePoint(trainer, probe, o, NAN));
  double lossSum = 0;
  int losses = 0;
  while (!trainer.finished()) {
    lossSum += trainer.trainStep().loss, ++losses;
    if (trainer.stepsDone() % o.every == 0 || trainer.finished()) {
      run.curve.push_back(measurePoint(trainer, probe, o, lossSum / losses));
      lossSum = 0, losses = 0;
    }
  }
  std::vector<double> steps, induction, accuracy;
  for (const CurvePoint& p : run.curve) steps.push_back(p.step), induction.push_back(p.induction), accuracy.push_back(p.accuracy);
  run.induction = detectPhaseChange(steps, induction, kInductionRule);
  run.accuracy = detectPhaseChange(steps, accuracy, kAccuracyRule);
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return run;
}

std::vector<const Run*> runsOf(const std::vector<Run>& runs, const Arm& a) {
  std::vector<const Run*> out;
  for (const Run& r : runs)
    if (r.arm == &a) out.push_back(&r);
  return out;
}

template <class F>
SeedInterval intervalOf(const std::vector<const Run*>& runs, F value, ValueRange range = kUnbounded) {
  std::vector<double> values;
  for (const Run* r : runs) values.push_back(value(*r));
  return seedInterval95(values, range);
}

// Over the seeds that showed a change only (NaN for the others is left out, not counted as diverged).
SeedInterval stepInterval(const std::vector<const Run*>& runs, bool width = false) {
  std::vector<double> values;
  for (const Run* r : runs)
    if (r->induction.found) values.push_back(width ? r->induction.width : r->induction.step);
  return seedInterval95(values, {0});  // a step (or a number of steps) is never negative
}
int changedCount(const std::vector<const Run*>& runs) {
  int n = 0;
  for (const Run* r : runs) n += r->induction.found;
  return n;
}
SeedInterval finalAccuracy(const std::vector<const Run*>& runs) { return intervalOf(runs, [](const Run& r) { return r.last().accuracy; }, kShareRange); }
SeedInterval finalInduction(const std::vector<const Run*>& runs) { return intervalOf(runs, [](const Run& r) { return r.last().induction; }, kShareRange); }
// Both intervals known and `above`'s lies wholly above `below`'s.
bool apart(const SeedInterval& above, const SeedInterval& below) {
  return above.hasSpread() && below.hasSpread() && above.low > below.high;
}
std::string seedsShowing(int k, size_t n) { return std::to_string(k) + " of " + std::to_string(n) + " seeds"; }

Finding twoLayerFinding(const std::vector<Run>& runs, const Options& o) {
  const auto two = runsOf(runs, kArms[0]);
  const int k = changedCount(two);
  const SeedInterval step = stepInterval(two), width = stepInterval(two, true);
  const bool abrupt = width.hasSpread() && width.high < kAbruptShare * o.steps;
  Finding f{"Two attention-only layers: induction heads form in a phase change",
            "Olsson et al. (R9): a two-layer attention-only model forms induction heads abruptly, in a visible phase change early in training",
            "the strongest head's induction score rose by >= " + fixed(kInductionRule.margin, 1) + " in " + seedsShowing(k, two.size()) +
                ", halfway at step " + intervalText(step, 0) + ", 25-75% of the rise in " + intervalText(width, 0) + " steps of " +
                std::to_string(o.steps) + " (abrupt: under " + fixed(100 * kAbruptShare, 0) + "% of the run)",
            "partly"};
  if (k == 0) f.verdict = "does not";
  else if (k == static_cast<int>(two.size()) && abrupt) f.verdict = "agrees";
  return f;
}

Finding coincidenceFinding(const std::vector<Run>& runs, const Options& o) {
  std::vector<double> lags;
  for (const Run* r : runsOf(runs, kArms[0]))
    lags.push_back(r->induction.found && r->accuracy.found ? r->accuracy.step - r->induction.step : NAN);
  const SeedInterval lag = seedInterval95(lags);
  const double band = 0.1 * o.steps;
  Finding f{"Two layers: in-context accuracy jumps with the induction score",
            "Olsson et al. (R9): the in-context learning gain appears at the same point in training as the induction heads",
            "in-context accuracy's halfway step minus the induction score's: " + intervalText(lag, 0) + " steps (both found in " +
                std::to_string(lag.n) + " of " + std::to_string(lags.size()) + " seeds; within +-" + fixed(band, 0) + " counts as together)",
            "partly"};
  if (lag.hasSpread() && lag.skipped == 0 && lag.low > -band && lag.high < band) f.verdict = "agrees";
  else if (lag.n > 0 && (lag.high < -band || lag.low > band)) f.verdict = "does not";
  return f;
}

Finding oneLayerFinding(const std::vector<Run>& runs) {
  const auto one = runsOf(runs, kArms[1]), two = runsOf(runs, kArms[0]);
  const int k = changedCount(one);
  const SeedInterval oneScore = finalInduction(one), twoScore = finalInduction(two);
  const SeedInterval oneAccuracy = finalAccuracy(one), twoAccuracy = finalAccuracy(two);
  Finding f{"One softmax layer: no induction phase change",
            "Olsson et al. (R9): induction needs two layers (a previous-token head composed with an induction head); one attention-only layer "
            "shows no such phase change",
            "a rise in " + seedsShowing(k, one.size()) + "; final induction score " + intervalText(oneScore) + " against two layers' " +
                intervalText(twoScore) + "; in-context accuracy " + intervalText(oneAccuracy) + " against two layers' " + intervalText(twoAccuracy),
            "partly"};
  // The claim is about induction itself: the attention (a rise) and the behaviour (accuracy as high as two layers').
  if (k == 0 && apart(twoScore, oneScore) && apart(twoAccuracy, oneAccuracy)) f.verdict = "agrees";
  else if (k == static_cast<int>(one.size()) && !apart(twoAccuracy, oneAccuracy)) f.verdict = "does not";
  return f;
}

Finding momentumFinding(const std::vector<Run>& runs, const Options& o) {
  const auto momentum = runsOf(runs, kArms[2]), softmax = runsOf(runs, kArms[1]);
  const int k = changedCount(momentum);
  const SeedInterval m = finalAccuracy(momentum), s = finalAccuracy(softmax);
  Finding f{"Momentum attention: induction in one layer",
            "seed 004: momentum attention (q~_t = q_t + gamma (q_t - q_{t-1}), keys alike) sidesteps the two-layer constraint: single-layer induction",
            "gamma " + fixed(o.gamma, 2) + ": a rise in " + seedsShowing(k, momentum.size()) + " (halfway at step " +
                intervalText(stepInterval(momentum), 0) + "); final in-context accuracy " + intervalText(m) + " against one softmax layer's " +
                intervalText(s),
            "partly"};
  if (k == static_cast<int>(momentum.size()) && apart(m, s)) f.verdict = "agrees";
  else if (k == 0 || m.mean <= s.mean) f.verdict = "does not";
  return f;
}

std::vector<Finding> findings(const std::vector<Run>& runs, const Options& o) {
  return {twoLayerFinding(runs, o), coincidenceFinding(runs, o), oneLayerFinding(runs), momentumFinding(runs, o)};
}

std::string optional(bool present, double v, int decimals) { return present ? fixed(v, decimals) : ""; }

std::string resultsCsv(const std::vector<Run>& runs) {
  std::ostringstream csv;
  csv << "model,layers,attention,seed,induction_step,induction_width,induction_start,induction_plateau,accuracy_step,final_train_loss,"
         "final_val_loss,final_accuracy,final_induction_score,seconds\n";
  for (const Run& r : runs)
    csv << r.arm->label << "," << r.arm->layers << "," << r.arm->attention << "," << r.seed << "," << optional(r.induction.found, r.induction.step, 1)
        << "," << optional(r.induction.found, r.induction.width, 1) << "," << fixed(r.induction.start, 6) << "," << fixed(r.induction.plateau, 6)
        << "," << optional(r.accuracy.found, r.accuracy.step, 1) << "," << fixed(r.last().trainLoss, 6) << "," << fixed(r.last().valLoss, 6)
        << "," << fixed(r.last().accuracy, 8) << "," << fixed(r.last().induction, 8) << "," << fixed(r.seconds, 1) << "\n";
  return csv.str();
}

std::string curvesCsv(const std::vector<Run>& runs) {
  std::ostringstream csv;
  csv << "model,seed,step,train_loss,val_loss,in_context_accuracy,induction_score,induction_layer,previous_token_score\n";
  for (const Run& r : runs)
    for (const CurvePoint& p : r.curve)
      csv << r.arm->label << "," << r.seed << "," << p.step << "," << (std::isnan(p.trainLoss) ? "" : fixed(p.trainLoss, 6)) << ","
          << fixed(p.valLoss, 6) << "," << fixed(p.accuracy, 6) << "," << fixed(p.induction, 6) << "," << p.inductionLayer << ","
          << fixed(p.previousToken, 6) << "\n";
  return csv.str();
}

// One line per seed of `value` against the step, a dashed vertical marker at each detected step and,
// with `margin`, a dashed line at the first seed's start plus the margin (the least rise a change needs).
std::string writeChart(const std::vector<Run>& runs, const Arm& a, const std::string& what, double (*value)(const CurvePoint&),
                       double margin, const std::string& out) {
  LineChart chart{a.label + ": " + what + " against the step (dashed: the detected phase change)", "step", what, {}, false};
  double lo = INFINITY, hi = -INFINITY;
  for (const Run* r : runsOf(runs, a)) {
    ChartSeries series{"seed " + std::to_string(r->seed), {}, {}, false};
    for (const CurvePoint& p : r->curve) {
      series.x.push_back(p.step);
      series.y.push_back(value(p));
      if (value(p) > 0) lo = std::min(lo, value(p)), hi = std::max(hi, value(p));
    }
    chart.series.push_back(series);
  }
  const Run* first = runsOf(runs, a).front();
  if (!std::isnan(margin)) {
    const double level = first->induction.start + margin;
    chart.series.push_back({"least rise: start + " + fixed(margin, 1),
                            {0, double(first->last().step)}, {level, level}, true});
    hi = std::max(hi, level);
  }
  for (const Run* r : runsOf(runs, a))
    if (r->induction.found && std::isfinite(lo))
      chart.series.push_back({"seed " + std::to_string(r->seed) + ": change at step " + fixed(r->induction.step, 0),
                              {r->induction.step, r->induction.step}, {lo, hi}, true});
  const std::string file = "charts/" + what.substr(0, what.find(' ')) + "_" + a.file + ".png";
  if (std::string why = writeLineChartPng(chart, out + "/" + file); !why.empty()) throw CliError(why, 1);
  return file;
}

std::string stepText(const PhaseChange& p) { return p.found ? fixed(p.step, 0) : "none"; }

std::string report(const std::vector<Run>& runs, const Options& o, const std::vector<std::string>& charts, const std::string& command,
                   double seconds) {
  const ExperimentConfig shape = configFor(o, kArms[0], o.seeds.front());
  const Settings& task = shape.task.settings;
  std::string seeds;
  for (uint64_t s : o.seeds) seeds += (seeds.empty() ? "" : ", ") + std::to_string(s);
  std::ostringstream md;
  md << "# Induction heads and the phase change (R9; seed 004's momentum attention)\n\n"
     << "Olsson et al. report that a two-layer attention-only transformer forms induction heads (attend to the token after the "
        "previous occurrence of the current one, and copy it) in an abrupt phase change, with in-context learning appearing at the "
        "same point, and that one layer cannot: the circuit composes a previous-token head with an induction head. Seed 004 says "
        "momentum attention, q~_t = q_t + gamma (q_t - q_{t-1}) with keys alike, gives one layer direct access to the previous "
        "token and so single-layer induction. Here: the induction preset's model with 2 softmax layers, 1 softmax layer and 1 "
        "momentum layer, each trained for every seed and measured against the step.\n\n"
     << "- Command: `" << command << "`\n"
     << "- Seeds: " << seeds << " (weights and training data)\n"
     << "- Models: attention only (no MLP), d_model " << shape.model.d_model << ", " << shape.model.n_heads << " heads, RoPE, untied "
     << "output; 2 or 1 layers as named; momentum gamma " << fixed(o.gamma, 2) << "\n"
     << "- Task: induction, random halves of up to " << task.at("length") << " of " << task.at("symbols")
     << " symbols repeated once, the half's length varied per sequence with dealt symbols before it; sequences of "
     << runs.front().seqLen << " tokens\n"
     << "- Training: " << o.steps << " steps of batch " << o.batch << ", AdamW lr " << shape.train.lr << " (warmup " << shape.train.warmup
     << ", cosine to " << shape.train.min_lr_ratio << "x)\n"
     << "- Measured every " << o.every << " steps and at step 0: validation loss and in-context accuracy (the answer tokens: the repeat "
     << "after its first token) on " << o.evalBatches * o.batch << " fixed validation sequences; every head's induction score (the mean weight a row puts on the "
     << "token after the earlier occurrence of its own token, located by content as the repeat's offset varies; per sequence, then "
     << "the mean over sequences, so a head attending a fixed distance back scores only on the sequences whose repeat sits there) and previous-token "
     << "score (a_i,i-1) on " << o.probeSequences << " fixed validation sequences (the same for every model and seed), the strongest head kept\n"
     << "- Phase change (analysis/phase_change.h): the strongest head's induction score, smoothed over 3 points; none when it never rises "
     << fixed(kInductionRule.margin, 1) << " above its start; else the step where it first reaches halfway from its start to its highest, "
     << "interpolated between points, and the width from 25% to 75% of the rise (the middle half: an early bump or the creep to the plateau does not stretch it). The same rule on the in-context accuracy gives its step.\n"
     << "- Size of the defaults (d_model 128, 3000 steps, 3 seeds): " << kDefaultCost << "\n"
     << "- Machine: " << machineLine() << ", " << threadCount(o.threads) << "; run time " << duration(seconds) << "\n\n"
     << "## Detected phase change per model\n\nMeans over seeds with the 95% t-interval in brackets; steps and widths over the seeds "
        "that showed a change.\n\n"
     << "| model | phase change | induction step | 25-75% width | accuracy step | final val loss | final in-context accuracy | final induction score |\n"
     << "| --- | --- | --- | --- | --- | --- | --- | --- |\n";
  for (const Arm& a : kArms) {
    const auto rs = runsOf(runs, a);
    std::vector<double> accuracySteps;
    for (const Run* r : rs)
      if (r->accuracy.found) accuracySteps.push_back(r->accuracy.step);
    md << "| " << a.label << " | " << seedsShowing(changedCount(rs), rs.size()) << " | " << intervalText(stepInterval(rs), 0) << " | "
       << intervalText(stepInterval(rs, true), 0) << " | " << intervalText(seedInterval95(accuracySteps, {0}), 0) << " | "
       << intervalText(intervalOf(rs, [](const Run& r) { return r.last().valLoss; })) << " | " << intervalText(finalAccuracy(rs)) << " | "
       << intervalText(finalInduction(rs)) << " |\n";
  }
  md << "\n## Per run\n\n| model | seed | induction step | width | induction score start -> highest | accuracy step | final in-context accuracy | seconds |\n"
     << "| --- | --- | --- | --- | --- | --- | --- | --- |\n";
  for (const Run& r : runs)
    md << "| " << r.arm->label << " | " << r.seed << " | " << stepText(r.induction) << " | " << (r.induction.found ? fixed(r.induction.width, 0) : "-")
       << " | " << fixed(r.induction.start, 3) << " -> " << fixed(r.induction.plateau, 3) << " | " << stepText(r.accuracy) << " | "
       << fixed(r.last().accuracy, 3) << " | " << fixed(r.seconds, 1) << " |\n";
  md << "\n## Against the paper\n\n" << findingsMarkdown(findings(runs, o))
     << "\n\"agrees\" only where the 95% intervals over seeds support the claim; with fewer than 2 seeds nothing can. Small models on a "
        "synthetic task: the direction and timing at this scale, not the papers' effect sizes.\n\n"
     << "## Curves\n\nOne line per seed. Dashed: each seed's detected step (vertical) and, on the induction charts, the first "
        "seed's start plus " << fixed(kInductionRule.margin, 1) << ", the least rise that counts. Every point of every run is in curves.csv.\n\n";
  for (const std::string& file : charts) md << "![" << file << "](" << file << ")\n\n";
  if (o.quick) md << "(--quick: tiny models trained a few steps; the numbers mean nothing.)\n";
  return md.str();
}

Options optionsFrom(const Args& args) {
  Options o;
  o.quick = args.has("quick");
  o.steps = static_cast<int>(args.integer("steps", o.quick ? 40 : 3000, 3, 1000000));
  o.batch = static_cast<int>(args.integer("batch", o.quick ? 8 : 64, 1, 4096));
  o.dModel = static_cast<int>(args.integer("d-model", o.quick ? 16 : 128, 4, 1024));
  o.every = static_cast<int>(args.integer("every", o.quick ? 5 : 25, 1, 1000000));
  o.gamma = args.number("gamma", 0.5, -1, 4);
  o.threads = threadsFrom(args, o.quick ? 1 : 2);  // tiny models gain nothing from a second thread
  o.evalBatches = o.quick ? 1 : 2;
  o.probeSequences = o.quick ? 4 : 64;
  o.seeds = seedsFrom(args, o.quick ? std::vector<uint64_t>{1, 2} : std::vector<uint64_t>{1, 2, 3});
  if (o.steps / o.every < 2) throw CliError("--every " + std::to_string(o.every) + " leaves fewer than 3 points in " + std::to_string(o.steps) + " steps");
  return o;
}

}  // namespace

int runPhaseChangeStudy(const Args& args) {
  const std::string out = args.required("out");
  const Options o = optionsFrom(args);
  makeStudyFolder(out);

  const auto start = std::chrono::steady_clock::now();
  std::vector<Run> runs;
  for (const Arm& a : kArms)
    for (uint64_t seed : o.seeds) {
      if (!args.has("quiet")) std::cerr << "study: " << a.label << ", seed " << seed << std::endl;
      try {
        runs.push_back(train(o, a, seed));
      } catch (const DivergenceError& e) {
        throw CliError(a.label + ", seed " + std::to_string(seed) + ": " + e.what(), kExitDiverged);
      } catch (const ConfigError& e) {
        throw CliError(a.label + ": " + e.what(), 1);
      }
    }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  OffscreenGui gui;
  std::vector<std::string> charts;
  for (const Arm& a : kArms) {
    charts.push_back(writeChart(runs, a, "induction score", [](const CurvePoint& p) { return p.induction; }, kInductionRule.margin, out));
    charts.push_back(writeChart(runs, a, "loss (validation)", [](const CurvePoint& p) { return p.valLoss; }, NAN, out));
  }
  const std::string command =
      studyCommand(args, "phase-change", {"quick", "steps", "batch", "d-model", "every", "gamma", "seeds", "threads"}) + " --out " + out;
  const std::pair<std::string, std::string> files[] = {{"report.md", report(runs, o, charts, command, seconds)},
                                                       {"results.csv", resultsCsv(runs)},
                                                       {"curves.csv", curvesCsv(runs)},
                                                       {"findings.csv", findingsCsv(findings(runs, o))}};
  for (const auto& [name, text] : files)
    if (std::string why = writeFileAtomic(out + "/" + name, text); !why.empty()) throw CliError(why, 1);
  std::cout << "report written to " << out << "/report.md (" << duration(seconds) << ")" << std::endl;
  return 0;
}

}  // namespace attnlab::cli
