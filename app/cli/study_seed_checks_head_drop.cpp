// study seed-checks, head-drop order (the head-importance paper): heads removed one at a time (output
// zeroed) in ascending, descending and random order of ablation importance, on every model and seed.
// Resilience is the mean of the task metric over the curve (accuracy, or minus the loss for a task
// without answers), from no head removed to all. Is ascending order the most resilient, in how many of
// the cases?
#include <algorithm>
#include <cmath>
#include <sstream>

#include "cli_error.h"
#include "format.h"
#include "report_chart.h"
#include "study_seed_checks_parts.h"

namespace attnlab::cli {
namespace {

// The share of their cases (40 tabular datasets) in which ascending order was the most resilient.
constexpr double kPaperAscendingShare = 0.725;
const char* const kOrders[] = {"ascending", "descending", "random"};

const HeadDropCurve& curveOf(const SeedCheckRun& r, const std::string& order) {
  for (const HeadDropCurve& c : r.importance.curves)
    if (c.order == order) return c;
  throw CliError(r.spec.label + ": no " + order + " head-drop curve", 1);
}

bool usesAccuracy(const SeedCheckRun& r) { return std::isfinite(r.importance.intact.accuracy); }

// Strictly above (or below) both other orders: a tie decides nothing.
bool ascendingBest(const SeedCheckRun& r) {
  const double a = curveOf(r, "ascending").resilience;
  return a > curveOf(r, "descending").resilience && a > curveOf(r, "random").resilience;
}
bool descendingWorst(const SeedCheckRun& r) {
  const double d = curveOf(r, "descending").resilience;
  return d < curveOf(r, "ascending").resilience && d < curveOf(r, "random").resilience;
}

std::vector<std::string> modelsOf(const std::vector<SeedCheckRun>& runs) {
  std::vector<std::string> labels;
  for (const SeedCheckRun& r : runs)
    if (std::find(labels.begin(), labels.end(), r.spec.label) == labels.end()) labels.push_back(r.spec.label);
  return labels;
}

std::string importanceCsv(const std::vector<SeedCheckRun>& runs) {
  std::ostringstream csv;
  csv << "model,seed,layer,head,ablation_loss_increase,gradient_importance\n";
  for (const SeedCheckRun& r : runs)
    for (const HeadImportance& h : r.importance.heads)
      csv << r.spec.label << "," << r.seed << "," << h.layer << "," << h.head << "," << fixed(h.ablation, 6) << "," << fixed(h.gradient, 6)
          << "\n";
  return csv.str();
}

std::string headDropCsv(const std::vector<SeedCheckRun>& runs) {
  std::ostringstream csv;
  csv << "model,seed,order,removed_count,removed_layer,removed_head,loss,metric\n";
  for (const SeedCheckRun& r : runs)
    for (const HeadDropCurve& c : r.importance.curves)
      for (size_t k = 0; k < c.metric.size(); ++k) {
        const int n = c.count[k];  // the last head removed by this point, if any
        csv << r.spec.label << "," << r.seed << "," << c.order << "," << n << "," << (n ? std::to_string(c.removed[n - 1].first) : "")
            << "," << (n ? std::to_string(c.removed[n - 1].second) : "") << "," << fixed(c.loss[k], 6) << "," << fixed(c.metric[k], 6)
            << "\n";
      }
  return csv.str();
}

std::string resilienceCsv(const std::vector<SeedCheckRun>& runs) {
  std::ostringstream csv;
  csv << "model,seed,metric,order,resilience\n";
  for (const SeedCheckRun& r : runs)
    for (const char* order : kOrders)
      csv << r.spec.label << "," << r.seed << "," << (usesAccuracy(r) ? "accuracy" : "minus_loss") << "," << order << ","
          << fixed(curveOf(r, order).resilience, 6) << "\n";
  return csv.str();
}

std::string table(const std::vector<SeedCheckRun>& runs) {
  std::ostringstream md;
  md << "| model | metric | intact | ascending | descending | random | ascending most resilient | descending least resilient |\n"
        "| --- | --- | --- | --- | --- | --- | --- | --- |\n";
  for (const std::string& label : modelsOf(runs)) {
    std::vector<double> intact, resilience[3];
    int best = 0, worst = 0, n = 0;
    bool accuracy = true;
    for (const SeedCheckRun& r : runs) {
      if (r.spec.label != label) continue;
      accuracy = usesAccuracy(r);
      intact.push_back(accuracy ? r.importance.intact.accuracy : r.importance.intact.loss);
      for (int o = 0; o < 3; ++o) resilience[o].push_back(curveOf(r, kOrders[o]).resilience);
      best += ascendingBest(r);
      worst += descendingWorst(r);
      ++n;
    }
    // an accuracy (and the resilience measured in it) cannot leave [0, 1]; a loss is unbounded
    auto over = [accuracy](const std::vector<double>& v) { return accuracy ? seedInterval95(v, kShareRange) : seedInterval95(v); };
    md << "| " << label << " | " << (accuracy ? "accuracy" : "loss (resilience: minus the mean loss)") << " | "
       << intervalText(over(intact)) << " |";
    for (auto& values : resilience) md << " " << intervalText(over(values)) << " |";
    md << " " << best << " of " << n << " seeds | " << worst << " of " << n << " seeds |\n";
  }
  return md.str();
}

// One chart per model: the metric against the heads removed, per order, mean over seeds.
std::vector<std::string> charts(const std::vector<SeedCheckRun>& runs, const std::string& out) {
  std::vector<std::string> files;
  for (const std::string& label : modelsOf(runs)) {
    LineChart chart{label + ": head-drop curves (mean over seeds)", "heads removed", "", {}, false};
    for (const char* order : kOrders) {
      ChartSeries series{order, {}, {}, false};
      int seeds = 0;
      for (const SeedCheckRun& r : runs) {
        if (r.spec.label != label) continue;
        const HeadDropCurve& c = curveOf(r, order);
        chart.yLabel = usesAccuracy(r) ? "accuracy" : "loss";
        if (series.x.empty()) series.x.assign(c.count.begin(), c.count.end()), series.y.assign(c.count.size(), 0.0);
        for (size_t k = 0; k < c.count.size() && k < series.y.size(); ++k) series.y[k] += usesAccuracy(r) ? c.metric[k] : c.loss[k];
        ++seeds;
      }
      for (double& y : series.y) y /= std::max(1, seeds);
      chart.series.push_back(series);
    }
    const std::string file = "charts/head_drop_" + label + ".png";
    if (std::string why = writeLineChartPng(chart, out + "/" + file); !why.empty()) throw CliError(why, 1);
    files.push_back(file);
  }
  return files;
}

std::string shareText(const ShareInterval& s) {
  return std::to_string(s.successes) + " of " + std::to_string(s.trials) + " cases (model x seed): " + percent(s.share) + " [" +
         percent(s.low) + ", " + percent(s.high) + "] (Wilson 95%)";
}

std::vector<Finding> findings(const std::vector<SeedCheckRun>& runs) {
  int best = 0, worst = 0;
  for (const SeedCheckRun& r : runs) best += ascendingBest(r), worst += descendingWorst(r);
  const int n = static_cast<int>(runs.size());
  const ShareInterval a = wilsonInterval95(best, n), d = wilsonInterval95(worst, n);
  const bool holdsPaper = a.low <= kPaperAscendingShare && kPaperAscendingShare <= a.high, mostly = a.low > 0.5;
  const std::string ascendingVerdict = holdsPaper && mostly ? "agrees" : holdsPaper || mostly ? "partly" : "does not";
  const std::string descendingVerdict = d.low > 0.5 ? "agrees" : d.high < 0.5 ? "does not" : "partly";
  return {{"R7: removing the least important heads first is the most resilient order",
           "seed 001: in 72.5% of their cases the model is most resilient when the lowest-importance heads go first",
           "ascending the most resilient in " + shareText(a) + "; 72.5% " + (holdsPaper ? "inside" : "outside") + " the interval",
           ascendingVerdict},
          {"R7: removing the most important heads first hurts most",
           "seed 001: removing the most important head first gives the greatest drop in performance",
           "descending the least resilient in " + shareText(d), descendingVerdict}};
}

}  // namespace

StudySection headDropSection(const std::vector<SeedCheckRun>& runs, const std::string& out) {
  StudySection section;
  std::ostringstream md;
  md << "## R7: head-drop curves by importance order (seed 001)\n\n"
        "After training, heads are removed one at a time (their output zeroed) in ascending, descending and random order of "
        "ablation importance (loss increase when the head alone is removed, importance.csv); resilience is the mean of the "
        "task metric over the curve from no head removed to all (for a task without answers, minus the mean loss). An order "
        "counts as the most (least) resilient of a case only when strictly above (below) both others. Mean over seeds with "
        "the 95% interval; curves in head_drop.csv (intact: its first point, no head removed), resilience per order in "
        "resilience.csv.\n\n"
     << table(runs) << "\n";
  for (const std::string& file : charts(runs, out)) md << "![" << file << "](" << file << ")\n";
  section.markdown = md.str();
  section.findings = findings(runs);
  section.files = {{"importance.csv", importanceCsv(runs)}, {"head_drop.csv", headDropCsv(runs)}, {"resilience.csv", resilienceCsv(runs)}};
  return section;
}

}  // namespace attnlab::cli
