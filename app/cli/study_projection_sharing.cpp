// study projection-sharing (the paper "do transformers need three projections?"): the KV cache
// a shared projection saves against the perplexity it costs. Trains the toy-language model with
// qkv, q_k=v, q=k_v and q=k=v (model/projection_sharing.h), each with one KV head per query head
// and with grouped KV heads (GQA), for every seed; then measures the held-out perplexity and the
// bytes the decoder's KV cache really holds per token, checked against live entries x entry size
// and against kv/kv_bytes.h. Writes report.md (the table with 95% intervals over seeds, the
// frontier chart, the findings against the paper), results.csv, findings.csv and charts/frontier.png and
// charts/frontier_paired.png (the same against qkv on the same seed).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "analysis/pareto_front.h"
#include "analysis/seed_interval.h"
#include "cli_error.h"
#include "format.h"
#include "io/checkpoint.h"
#include "io/config_json.h"
#include "kv/decoder.h"
#include "kv/live_cache_eval.h"
#include "kv/kv_bytes.h"
#include "report_chart.h"
#include "setup.h"
#include "study_projection_sharing.h"
#include "study_support.h"

namespace attnlab::cli {
namespace {

const std::vector<std::string> kSharings = {"qkv", "q_k=v", "q=k_v", "q=k=v"};
constexpr double kPaperLmCost = 3.1;  // the paper's q_k=v perplexity cost in language modelling, percent

struct Arm {
  std::string sharing;
  int kvHeads = 0;
  std::string label() const { return sharing + " (" + std::to_string(kvHeads) + (kvHeads == 1 ? " KV head)" : " KV heads)"); }
};

struct Options {
  bool quick = false;
  int steps = 0, threads = 2, dModel = 0, layers = 0, heads = 0, kvHeads = 0, context = 0, batch = 0, evalBatches = 0;
  std::vector<uint64_t> seeds;
  std::vector<Arm> arms;  // every sharing with heads KV heads, then every sharing with kvHeads
};

struct Row {
  int arm = 0;
  uint64_t seed = 0;
  size_t params = 0;
  size_t bytesHeld = 0;  // what the decoder's cache held after the held-out sequence
  int tokensHeld = 0;
  int tensorsCached = 0;  // per entry: 2 (K and V) or 1 (the values are the keys)
  double trainLoss = NAN, valLoss = NAN, valPpl = NAN, seconds = 0;
  double bytesPerToken() const { return static_cast<double>(bytesHeld) / tokensHeld; }
};

ExperimentConfig configFor(const Options& o, const Arm& a, uint64_t seed) {
  ExperimentConfig c;
  if (std::string why = loadPreset("toy_language", c); !why.empty()) throw CliError(why, 1);
  c.model.d_model = o.dModel;
  c.model.d_ff = 4 * o.dModel;
  c.model.n_layers = o.layers;
  c.model.n_heads = o.heads;
  c.model.n_kv_heads = a.kvHeads;
  c.model.context = o.context;
  c.model.projection_sharing = a.sharing;
  c.train.batch = o.batch;
  trainForStudy(c.train, o.steps, seed, o.threads);
  return c;
}

// Decodes one held-out sequence through the cache (nothing evicted) and reads what it holds. At
// every step the bytes must be the tokens held times the configuration's own count (kv_bytes.h),
// and at the end the live entries times each entry's size: the study refuses to report a number
// those disagree on.
void measureCache(const Trainer& trainer, uint64_t seed, Row& row) {
  const ModelConfig& c = trainer.model().config();
  const Batch text = heldOutSequences(trainer.task(), 1, trainer.sequenceLength(), seed);
  Decoder decoder(trainer.model(), makeEvictionPolicy("full", {}, c), "full", Budget{});
  const size_t perToken = kvCacheBytesPerToken(c);
  for (int t = 0; t < text.T; ++t) {
    decoder.step(text.inputs[t]);
    if (decoder.record().bytes != (t + 1) * perToken)
      throw CliError("KV cache check: after " + std::to_string(t + 1) + " tokens the cache holds " + std::to_string(decoder.record().bytes) +
                         " bytes, kv_bytes.h says " + std::to_string((t + 1) * perToken),
                     1);
  }
  const KvCache& cache = decoder.cache();
  size_t held = 0, fromEntries = 0;
  for (int l = 0; l < c.n_layers; ++l)
    for (int h = 0; decoder.cachesLayer(l) && h < cache.kvHeads(); ++h) {
      if (cache.head(l, h).size() != text.T) throw CliError("KV cache check: layer " + std::to_string(l) + " lost entries", 1);
      held += cache.bytes(l, h);
      fromEntries += static_cast<size_t>(cache.head(l, h).size()) * cache.bytesPerEntry(l);
    }
  if (held != decoder.record().bytes || held != fromEntries)
    throw CliError("KV cache check: the cache holds " + std::to_string(held) + " bytes, its step record says " +
                       std::to_string(decoder.record().bytes) + ", live entries x entry size " + std::to_string(fromEntries),
                   1);
  row.bytesHeld = held;
  row.tokensHeld = text.T;
  row.tensorsCached = static_cast<int>(cache.bytesPerEntry(0) / RowStore::rowBytes(KvQuant::fp32, c.headDim()));
}

Row measure(const Options& o, int arm, uint64_t seed) {
  const auto start = std::chrono::steady_clock::now();
  Trainer trainer(configFor(o, o.arms[arm], seed));
  Row row;
  row.arm = arm;
  row.seed = seed;
  row.params = trainer.model().params().totalElements();
  while (!trainer.finished()) row.trainLoss = trainer.trainStep().loss;
  const EvalResult eval = trainer.evaluate(o.evalBatches);
  row.valLoss = eval.loss;
  row.valPpl = eval.perplexity;
  measureCache(trainer, seed, row);
  row.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return row;
}

const Row* find(const std::vector<Row>& rows, int arm, uint64_t seed) {
  for (const Row& r : rows)
    if (r.arm == arm && r.seed == seed) return &r;
  return nullptr;
}
int armIndex(const Options& o, const std::string& sharing, int kvHeads) {
  for (size_t i = 0; i < o.arms.size(); ++i)
    if (o.arms[i].sharing == sharing && o.arms[i].kvHeads == kvHeads) return static_cast<int>(i);
  throw std::logic_error("no arm " + sharing);
}

template <class F>
SeedInterval overSeeds(const std::vector<Row>& rows, const Options& o, int arm, F value) {
  std::vector<double> values;
  for (uint64_t seed : o.seeds)
    if (const Row* r = find(rows, arm, seed)) values.push_back(value(*r));
  return seedInterval95(values);
}
// Per seed, arm's perplexity against base's on the same seed, in percent: 100 (ppl / ppl_base - 1).
SeedInterval pplChange(const std::vector<Row>& rows, const Options& o, int arm, int base) {
  std::vector<double> values;
  for (uint64_t seed : o.seeds) {
    const Row *a = find(rows, arm, seed), *b = find(rows, base, seed);
    if (a && b) values.push_back(100 * (a->valPpl / b->valPpl - 1));
  }
  return seedInterval95(values);
}

// A claim that x is at most `limit` (or above it): supported when the whole 95% interval is,
// contradicted when none of it is; one seed gives no interval to judge by.
std::string verdictAtMost(const SeedInterval& x, double limit) {
  if (!x.hasSpread()) return "partly";
  return x.high <= limit ? "agrees" : x.low > limit ? "does not" : "partly";
}
std::string verdictAbove(const SeedInterval& x, double limit) {
  if (!x.hasSpread()) return "partly";
  return x.low > limit ? "agrees" : x.high <= limit ? "does not" : "partly";
}

std::vector<Finding> findings(const std::vector<Row>& rows, const Options& o) {
  const int qkv = armIndex(o, "qkv", o.heads), kEqV = armIndex(o, "q_k=v", o.heads), qEqK = armIndex(o, "q=k_v", o.heads),
            single = armIndex(o, "q=k=v", o.heads), kEqVGrouped = armIndex(o, "q_k=v", o.kvHeads);
  const uint64_t seed = o.seeds.front();  // bytes do not depend on the seed: the cache's shape is the config's
  const size_t full = find(rows, qkv, seed)->bytesHeld / find(rows, qkv, seed)->tokensHeld;
  const size_t shared = find(rows, kEqV, seed)->bytesHeld / find(rows, kEqV, seed)->tokensHeld;
  const size_t grouped = find(rows, kEqVGrouped, seed)->bytesHeld / find(rows, kEqVGrouped, seed)->tokensHeld;
  const int group = o.heads / o.kvHeads;
  const std::string seeds = " (mean [95% interval] over " + std::to_string(o.seeds.size()) + " seeds)";
  const SeedInterval kEqVCost = pplChange(rows, o, kEqV, qkv), qEqKCost = pplChange(rows, o, qEqK, kEqV),
                     singleCost = pplChange(rows, o, single, qkv);
  return {
      {"q_k=v halves the KV cache", "q_k=v: 50% KV cache reduction",
       std::to_string(full) + " -> " + std::to_string(shared) + " bytes per token: " + percent(1 - double(shared) / full) +
           " less (the bytes the cache held; the same every seed)",
       2 * shared == full ? "agrees" : "does not"},
      {"q_k=v costs little perplexity", "only 3.1% perplexity degradation (language models of 300M and 1.2B parameters)",
       "PPL " + intervalText(kEqVCost, 2) + " % against qkv" + seeds, verdictAtMost(kEqVCost, kPaperLmCost)},
      {"q_k=v and grouped KV heads: the savings multiply", "q_k=v + GQA-4: 87.5% KV cache reduction",
       percent(1 - double(grouped) / full) + " less with " + std::to_string(group) + " query heads per KV head (the rule 1 - 1/(2 x " +
           std::to_string(group) + ") gives " + percent(1 - 1.0 / (2 * group)) + "; the paper's 87.5% is for groups of 4)",
       full == 2 * static_cast<size_t>(group) * grouped ? "agrees" : "does not"},
      {"q=k_v breaks attention directionality", "q=k_v (symmetric scores) is worse than q_k=v",
       "PPL of q=k_v " + intervalText(qEqKCost, 2) + " % against q_k=v" + seeds, verdictAbove(qEqKCost, 0)},
      {"a single projection is on par with qkv", "shared projections perform on par with or occasionally better than qkv",
       "PPL of q=k=v " + intervalText(singleCost, 2) + " % against qkv" + seeds + "; on par read as within the paper's 3.1%",
       verdictAtMost(singleCost, kPaperLmCost)},
  };
}

std::string resultsCsv(const std::vector<Row>& rows, const Options& o) {
  std::ostringstream csv;
  csv << "model,projection_sharing,n_heads,n_kv_heads,seed,params,kv_bytes_held,tokens_held,kv_bytes_per_token,tensors_cached,"
         "train_loss,val_loss,val_ppl,seconds\n";
  for (const Row& r : rows) {
    const Arm& a = o.arms[r.arm];
    csv << a.label() << "," << a.sharing << "," << o.heads << "," << a.kvHeads << "," << r.seed << "," << r.params << "," << r.bytesHeld
        << "," << r.tokensHeld << "," << fixed(r.bytesPerToken(), 1) << "," << r.tensorsCached << "," << fixed(r.trainLoss, 6) << ","
        << fixed(r.valLoss, 6) << "," << fixed(r.valPpl, 6) << "," << fixed(r.seconds, 1) << "\n";
  }
  return csv.str();
}

// Each arm's (KV bytes per token, PPL), means over seeds: the points of the frontier.
std::vector<CostLoss> armMeans(const std::vector<Row>& rows, const Options& o) {
  std::vector<CostLoss> points;
  for (size_t a = 0; a < o.arms.size(); ++a)
    points.push_back({overSeeds(rows, o, a, [](const Row& r) { return r.bytesPerToken(); }).mean,
                      overSeeds(rows, o, a, [](const Row& r) { return r.valPpl; }).mean});
  return points;
}

// Per arm, PPL over seeds (`perArm[a]`) against KV bytes per token: one point per arm (mean, 95%
// interval as an error bar), the Pareto-optimal arms (by these means) joined. Arms of equal size are
// spread sideways by 1.5% of the axis each.
std::string frontierChart(const std::vector<Row>& rows, const Options& o, const std::vector<SeedInterval>& perArm, const std::string& title,
                          const std::string& yLabel, const std::string& path) {
  LineChart chart{title, "KV cache bytes per token (arms of equal size spread sideways)", yLabel, {}, false};
  std::vector<CostLoss> points;
  for (size_t a = 0; a < o.arms.size(); ++a)
    points.push_back({overSeeds(rows, o, a, [](const Row& r) { return r.bytesPerToken(); }).mean, perArm[a].mean});
  double lo = INFINITY, hi = 0;
  for (const CostLoss& p : points) lo = std::min(lo, p.cost), hi = std::max(hi, p.cost);
  std::vector<double> x(points.size());
  for (size_t a = 0; a < points.size(); ++a) {
    int same = 0, before = 0;
    for (size_t b = 0; b < points.size(); ++b)
      if (points[b].cost == points[a].cost) ++same, before += b < a;
    x[a] = points[a].cost + (before - (same - 1) / 2.0) * 0.015 * std::max(hi - lo, 1.0);
  }
  std::vector<ErrorBars> bars;
  for (size_t a = 0; a < o.arms.size(); ++a) {
    chart.series.push_back({o.arms[a].label(), {x[a]}, {perArm[a].mean}, false});
    bars.push_back({{perArm[a].low}, {perArm[a].high}});
  }
  ChartSeries front{"Pareto front (means)", {}, {}, true};
  for (int a : paretoFront(points)) front.x.push_back(x[a]), front.y.push_back(points[a].loss);
  chart.series.push_back(front);
  return writeErrorBarChartPng(chart, bars, path);
}

// The frontier of absolute perplexity, and of perplexity over qkv's on the same seed (the paired
// view: held-out text and data differ between seeds, so the absolute intervals are wider).
std::string frontierCharts(const std::vector<Row>& rows, const Options& o, const std::string& out) {
  const int qkv = armIndex(o, "qkv", o.heads);
  std::vector<SeedInterval> ppl, ratio;
  for (size_t a = 0; a < o.arms.size(); ++a) {
    ppl.push_back(overSeeds(rows, o, a, [](const Row& r) { return r.valPpl; }));
    SeedInterval r = pplChange(rows, o, a, qkv);  // percent -> ratio, a linear map of mean and ends
    for (double* v : {&r.mean, &r.low, &r.high}) *v = 1 + *v / 100;
    ratio.push_back(r);
  }
  if (std::string why = frontierChart(rows, o, ppl, "Perplexity against KV cache per token (mean and 95% interval over seeds)",
                                      "validation perplexity", out + "/charts/frontier.png");
      !why.empty())
    return why;
  return frontierChart(rows, o, ratio, "Perplexity over qkv's on the same seed, against KV cache per token",
                       "val PPL / qkv's val PPL (95% interval over seeds)", out + "/charts/frontier_paired.png");
}

std::string table(const std::vector<Row>& rows, const Options& o) {
  const int qkv = armIndex(o, "qkv", o.heads);
  const double full = find(rows, qkv, o.seeds.front())->bytesPerToken();
  const std::vector<int> front = paretoFront(armMeans(rows, o));
  std::ostringstream md;
  md << "| model | parameters | tensors cached | KV bytes per token | cache against qkv | val PPL | PPL change against qkv (%) | on the front |\n"
     << "|---|---|---|---|---|---|---|---|\n";
  for (size_t a = 0; a < o.arms.size(); ++a) {
    const Row& first = *find(rows, a, o.seeds.front());
    md << "| " << o.arms[a].label() << " | " << first.params << " | " << (first.tensorsCached == 1 ? "K only (V = K)" : "K and V")
       << " | " << fixed(first.bytesPerToken(), 0) << " | " << percent(first.bytesPerToken() / full) << " | "
       << intervalText(overSeeds(rows, o, a, [](const Row& r) { return r.valPpl; })) << " | "
       << (static_cast<int>(a) == qkv ? "-" : intervalText(pplChange(rows, o, a, qkv), 2)) << " | "
       << (std::find(front.begin(), front.end(), static_cast<int>(a)) != front.end() ? "yes" : "") << " |\n";
  }
  return md.str();
}

Options optionsFrom(const Args& args) {
  Options o;
  o.quick = args.has("quick");
  o.steps = static_cast<int>(args.integer("steps", o.quick ? 10 : 800, 1, 1000000));
  o.threads = threadsFrom(args, 2);
  o.dModel = static_cast<int>(args.integer("d-model", o.quick ? 16 : 64, 4, 1024));
  o.layers = static_cast<int>(args.integer("layers", o.quick ? 1 : 2, 1, 16));
  o.heads = static_cast<int>(args.integer("heads", 4, 2, 64));
  o.kvHeads = static_cast<int>(args.integer("kv-heads", 1, 1, 64));
  o.context = static_cast<int>(args.integer("context", o.quick ? 16 : 64, 4, 1024));
  o.batch = static_cast<int>(args.integer("batch", o.quick ? 4 : 16, 1, 4096));
  o.evalBatches = static_cast<int>(args.integer("eval-batches", o.quick ? 1 : 8, 1, 1000));
  o.seeds = seedsFrom(args, o.quick ? std::vector<uint64_t>{1, 2} : std::vector<uint64_t>{1, 2, 3});
  if (o.kvHeads >= o.heads || o.heads % o.kvHeads != 0)
    throw CliError("--kv-heads " + std::to_string(o.kvHeads) + " must divide --heads " + std::to_string(o.heads) +
                   " and be smaller (it sets the grouped arms)");
  for (int kv : {o.heads, o.kvHeads})
    for (const std::string& s : kSharings) o.arms.push_back({s, kv});
  for (const Arm& a : o.arms)  // before any training: a bad size fails now, not after the first arms
    if (std::string why = validate(configFor(o, a, o.seeds.front())); !why.empty()) throw CliError(a.label() + ": " + why);
  return o;
}

}  // namespace

int runProjectionSharingStudy(const Args& args) {
  const std::string out = args.required("out");
  const Options o = optionsFrom(args);
  makeStudyFolder(out);

  const auto start = std::chrono::steady_clock::now();
  std::vector<Row> rows;
  for (size_t a = 0; a < o.arms.size(); ++a)
    for (uint64_t seed : o.seeds) {
      if (!args.has("quiet")) std::cerr << "study: " << o.arms[a].label() << ", seed " << seed << std::endl;
      try {
        rows.push_back(measure(o, static_cast<int>(a), seed));
      } catch (const DivergenceError& e) {
        throw CliError(o.arms[a].label() + ", seed " + std::to_string(seed) + ": " + e.what(), kExitDiverged);
      } catch (const ConfigError& e) {
        throw CliError(o.arms[a].label() + ": " + e.what());
      }
    }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const ExperimentConfig shape = configFor(o, o.arms[0], o.seeds.front());

  {
    OffscreenGui gui;
    if (std::string why = frontierCharts(rows, o, out); !why.empty()) throw CliError(why, 1);
  }
  const std::vector<Finding> checked = findings(rows, o);
  std::string seeds;
  for (uint64_t s : o.seeds) seeds += (seeds.empty() ? "" : ", ") + std::to_string(s);
  std::ostringstream md;
  md << "# Projection sharing: KV cache saved against perplexity paid (R5; seed 000)\n\n"
     << "Seed 000 (Kayyam et al., \"do transformers need three projections?\") shares the query, key and value "
        "projections: q_k=v (keys are values), q=k_v (queries are keys: symmetric scores), q=k=v (one projection). "
        "Here each is trained on the toy language with one KV head per query head and with grouped KV heads (GQA), "
        "every arm at the same size and steps, for every seed; then measured on held-out text: the validation "
        "perplexity and the bytes the KV cache holds per token while decoding.\n\n"
     << "- Command: `"
     << studyCommand(args, "projection-sharing",
                     {"quick", "steps", "seeds", "d-model", "layers", "heads", "kv-heads", "context", "batch", "eval-batches", "threads"})
     << " --out " << out << "`\n"
     << "- Seeds: " << seeds << " (weights, training data and held-out text)\n"
     << "- Models: d_model " << shape.model.d_model << ", " << o.layers << (o.layers == 1 ? " layer, " : " layers, ") << o.heads << " query heads of " << shape.model.headDim()
     << " dimensions with " << o.heads << " or " << o.kvHeads << " KV heads, d_ff " << shape.model.d_ff << ", context " << o.context
     << ", learned positions; " << o.steps << " steps of batch " << o.batch << ", lr " << shape.train.lr << " (warmup "
     << shape.train.warmup << ", cosine)\n"
     << "- Evaluation: perplexity on " << o.evalBatches << " validation batches of " << o.batch << " sequences; KV bytes on one held-out "
        "sequence decoded token by token\n"
     << "- Machine: " << machineLine() << ", " << threadCount(o.threads) << "; run time " << duration(seconds)
     << " (the defaults were sized at about 30 minutes on 2 idle cores, from 0.19 CPU-seconds per training step, evaluation included, measured "
        "on a shared, loaded machine)\n\n"
     << table(rows, o) << "\nMean over seeds with the 95% t-interval in brackets; the PPL change is taken per seed against qkv "
        "(one KV head per query head) on the same seed. Per model and seed: results.csv.\n\n"
     << "![charts/frontier.png](charts/frontier.png)\n\nThe same, each model's perplexity over qkv's on the same seed (the "
        "differences between seeds' held-out text cancel):\n\n![charts/frontier_paired.png](charts/frontier_paired.png)\n\n"
     << "## What the cache holds\n\n"
        "KV bytes per token are the bytes the decoder's cache held after decoding a held-out sequence of "
     << rows.front().tokensHeld << " tokens (nothing evicted), divided by the tokens held. For every model and seed the study "
        "checked that this equals the live entries times each entry's size, and at every step of the decoding the "
        "tokens held times the configuration's own count (engine/kv/kv_bytes.h). The engine caches, per layer and KV head, one fp32 row of the head's width for the "
        "keys and one for the values; where the stored values equal the stored keys (q_k=v and q=k=v here: learned "
        "positions rotate nothing, and there is no value gate) it holds the key rows only. With RoPE a shared projection "
        "would still cache values apart, since keys are rotated and values are not. q=k_v shares the query with the key, "
        "which the cache does not hold, so it saves nothing; with grouped heads each query head is its group's key "
        "head, so q=k_v and q=k=v then also have as few distinct query heads as KV heads (hence their fewer parameters).\n\n"
     << "## Against the paper\n\n" << findingsMarkdown(checked)
     << "\nVerdicts follow the intervals: agrees when the whole 95% interval over seeds supports the claim, does not when "
        "it contradicts it, partly otherwise; the cache sizes are exact. The paper trained models of 300M and 1.2B "
        "parameters on 10B tokens; these are small models trained for minutes on a toy grammar: the direction at this "
        "scale, not a measurement of the paper's effect sizes.\n";
  if (o.quick) md << "\n(--quick: tiny models trained a few steps; the numbers mean nothing.)\n";
  for (const auto& [name, text] : {std::pair<std::string, std::string>{"report.md", md.str()}, {"results.csv", resultsCsv(rows, o)},
                                   {"findings.csv", findingsCsv(checked)}})
    if (std::string why = writeFileAtomic(out + "/" + name, text); !why.empty()) throw CliError(why, 1);
  std::cout << "report written to " << out << "/report.md (" << duration(seconds) << ")" << std::endl;
  return 0;
}

}  // namespace attnlab::cli
