// study seed-checks, QK spectra by positional encoding (the QK-operator spectrum paper): the QK
// spectrum of every head of the induction models under RoPE, learned absolute positions and ALiBi, for
// every seed. At step 0 against the Ginibre null; after training, how rotational the strongest
// previous-token head is (the imaginary share of the eigenvalues of M = W_q^T W_k: 0 for a real
// spectrum, near 0.5 for the random null, 1 for a pure rotation; under RoPE also the rotational share
// of its per-frequency phase blocks), and the eigenvalue share over training per head
// (charts/rotational_share_*.png).
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <sstream>

#include "cli_error.h"
#include "format.h"
#include "report_chart.h"
#include "study_seed_checks_parts.h"

namespace attnlab::cli {
namespace {

// A head is called a previous-token head when at least half its attention goes to key i-1.
constexpr double kPreviousTokenHeadMin = 0.5;
// At initialisation a head sits at the null when its spectral radius is within this factor of the circular law's.
constexpr double kNullTolerance = 1.25;

using Runs = std::vector<const SeedCheckRun*>;

// The spectral runs grouped by model, in the order they were run.
std::vector<std::pair<std::string, Runs>> byModel(const std::vector<SeedCheckRun>& runs) {
  std::vector<std::pair<std::string, Runs>> out;
  for (const SeedCheckRun& r : runs) {
    if (!r.spec.spectral) continue;
    auto at = std::find_if(out.begin(), out.end(), [&](const auto& m) { return m.first == r.spec.label; });
    if (at == out.end()) at = out.insert(out.end(), {r.spec.label, {}});
    at->second.push_back(&r);
  }
  return out;
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? NAN : s / v.size();
}

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// Per seed, the mean over the model's heads at step 0 of `value`; then the interval over seeds.
// Every measure here is a share in [0, 1] (its interval cut there) but the radius over the null's.
SeedInterval atInit(const Runs& runs, const std::function<double(const HeadSnapshot&)>& value, ValueRange range = kShareRange) {
  std::vector<double> perSeed;
  for (const SeedCheckRun* r : runs) {
    std::vector<double> heads;
    for (const HeadSnapshot& s : r->snapshots)
      if (s.step == 0) heads.push_back(value(s));
    perSeed.push_back(mean(heads));
  }
  return seedInterval95(perSeed, range);
}

SeedInterval ofNullDraw(const Runs& runs, const std::function<double(const SeedCheckRun&, const QkSpectrum&)>& value,
                        ValueRange range = kShareRange) {
  std::vector<double> perSeed;
  for (const SeedCheckRun* r : runs) {
    std::vector<double> heads;
    for (const QkSpectrum& s : r->nullDraw) heads.push_back(value(*r, s));
    perSeed.push_back(mean(heads));
  }
  return seedInterval95(perSeed, range);
}

// Per seed, `value` of the strongest previous-token head after training.
SeedInterval ofBest(const Runs& runs, const std::function<double(const HeadSnapshot&)>& value) {
  std::vector<double> perSeed;
  for (const SeedCheckRun* r : runs) perSeed.push_back(value(*strongestPreviousTokenHead(*r)));
  return seedInterval95(perSeed, kShareRange);
}

// Per seed, the median imaginary share of the model's other heads after training.
SeedInterval othersMedian(const Runs& runs) {
  std::vector<double> perSeed;
  for (const SeedCheckRun* r : runs) {
    const HeadSnapshot* best = strongestPreviousTokenHead(*r);
    std::vector<double> others;
    for (const HeadSnapshot& s : r->snapshots)
      if (s.step == best->step && &s != best) others.push_back(s.spectrum.imaginary_share);
    perSeed.push_back(median(others));
  }
  return seedInterval95(perSeed, kShareRange);
}

std::string spectraCsv(const std::vector<SeedCheckRun>& runs) {
  std::ostringstream csv;
  csv << "model,positional,seed,step,layer,head,previous_token,induction,entropy,sink,radius_over_null,imaginary_share,"
         "skew_energy_share,henrici,rope_rotational_share\n";
  for (const SeedCheckRun& r : runs)
    for (const HeadSnapshot& s : r.snapshots)
      csv << r.spec.label << "," << r.config.model.positional << "," << r.seed << "," << s.step << "," << s.layer << "," << s.head << ","
          << fixed(s.maps.previous_token, 6) << "," << fixed(s.maps.induction, 6) << "," << fixed(s.maps.entropy, 6) << ","
          << fixed(s.maps.sink, 6) << "," << fixed(s.radiusOverNull, 6) << "," << fixed(s.spectrum.imaginary_share, 6) << ","
          << fixed(s.spectrum.skew_energy_share, 6) << "," << fixed(s.spectrum.henrici, 6) << ","
          << (s.spectrum.rope.empty() ? "" : fixed(s.spectrum.rope_rotational_share, 6)) << "\n";
  return csv.str();
}

std::string nullDrawCsv(const std::vector<SeedCheckRun>& runs) {
  std::ostringstream csv;
  csv << "model,positional,seed,layer,head,radius_over_null,imaginary_share,skew_energy_share,henrici,rope_rotational_share\n";
  for (const SeedCheckRun& r : runs)
    for (const QkSpectrum& s : r.nullDraw)
      csv << r.spec.label << "," << r.config.model.positional << "," << r.seed << "," << s.layer << "," << s.head << ","
          << fixed(s.spectral_radius / r.circularRadius, 6) << "," << fixed(s.imaginary_share, 6) << "," << fixed(s.skew_energy_share, 6)
          << "," << fixed(s.henrici, 6) << "," << (s.rope.empty() ? "" : fixed(s.rope_rotational_share, 6)) << "\n";
  return csv.str();
}

std::string initTable(const std::vector<std::pair<std::string, Runs>>& models) {
  std::ostringstream md;
  md << "### At initialisation: the Ginibre null\n\n"
        "Every head's M at step 0, and every head of a fresh model of the same configuration drawn from another seed (the "
        "null itself), against the circular-law radius s^2 sqrt(d_model d_head). Per seed the mean over the model's heads, "
        "then the mean over seeds with its 95% interval. S = W_k W_q^T is a product of two random matrices, so expect "
        "radius/null near 1 and imaginary and skew shares near 0.5, but a Henrici departure near 0.9 (a square Ginibre "
        "matrix gives 0.71). Data: spectra.csv (step 0) and null_draw.csv.\n\n"
        "| model | radius/null | imaginary share | skew share | Henrici | null drawn: radius/null | imaginary share | skew share | Henrici |\n"
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
  for (const auto& [label, runs] : models)
    md << "| " << label << " | " << intervalText(atInit(runs, [](const HeadSnapshot& s) { return s.radiusOverNull; }, kUnbounded)) << " | "
       << intervalText(atInit(runs, [](const HeadSnapshot& s) { return s.spectrum.imaginary_share; })) << " | "
       << intervalText(atInit(runs, [](const HeadSnapshot& s) { return s.spectrum.skew_energy_share; })) << " | "
       << intervalText(atInit(runs, [](const HeadSnapshot& s) { return s.spectrum.henrici; })) << " | "
       << intervalText(ofNullDraw(runs, [](const SeedCheckRun& r, const QkSpectrum& s) { return s.spectral_radius / r.circularRadius; }, kUnbounded))
       << " | " << intervalText(ofNullDraw(runs, [](const SeedCheckRun&, const QkSpectrum& s) { return s.imaginary_share; })) << " | "
       << intervalText(ofNullDraw(runs, [](const SeedCheckRun&, const QkSpectrum& s) { return s.skew_energy_share; })) << " | "
       << intervalText(ofNullDraw(runs, [](const SeedCheckRun&, const QkSpectrum& s) { return s.henrici; })) << " |\n";
  return md.str();
}

std::string trainedTable(const std::vector<std::pair<std::string, Runs>>& models) {
  std::ostringstream md;
  md << "### After training: the strongest previous-token head\n\n"
        "Per seed the head with the highest previous-token score (mean attention on key i-1 over repeated random "
        "sequences) at the last step; its rotational share is the imaginary share of the eigenvalues of M; the other heads' "
        "median for comparison; under RoPE also the rotational share of the per-frequency 2x2 blocks (sum Im z_m^2 / sum "
        "|z_m|^2: the phase channel where RoPE's rotation sits, about 0.5 for the null drawn). A head is a clear previous-token head at a score of "
     << fixed(kPreviousTokenHeadMin, 1) << " or more. Mean over seeds with the 95% interval. Data: spectra.csv (last step); held-out accuracy: runs.csv.\n\n"
     << "| model | accuracy | head per seed (layer.head) | previous-token score | induction score | rotational share | others' median | "
        "RoPE block rotational share |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n";
  for (const auto& [label, runs] : models) {
    std::vector<double> accuracy;
    std::string heads;
    for (const SeedCheckRun* r : runs) {
      accuracy.push_back(r->accuracy);
      const HeadSnapshot* best = strongestPreviousTokenHead(*r);
      heads += (heads.empty() ? "" : ", ") + std::to_string(best->layer) + "." + std::to_string(best->head);
    }
    const bool rope = !strongestPreviousTokenHead(*runs.front())->spectrum.rope.empty();
    md << "| " << label << " | " << intervalText(seedInterval95(accuracy, kShareRange)) << " | " << heads << " | "
       << intervalText(ofBest(runs, [](const HeadSnapshot& s) { return s.maps.previous_token; })) << " | "
       << intervalText(ofBest(runs, [](const HeadSnapshot& s) { return s.maps.induction; })) << " | "
       << intervalText(ofBest(runs, [](const HeadSnapshot& s) { return s.spectrum.imaginary_share; })) << " | "
       << intervalText(othersMedian(runs)) << " | "
       << (rope ? intervalText(ofBest(runs, [](const HeadSnapshot& s) { return s.spectrum.rope_rotational_share; })) : "-") << " |\n";
  }
  return md.str();
}

// Which rotational share of a head's spectrum a chart draws.
using ShareOf = double (*)(const QkSpectrum&);
double eigenvalueShare(const QkSpectrum& s) { return s.imaginary_share; }
double phaseBlockShare(const QkSpectrum& s) { return s.rope_rotational_share; }

// Every head's `share` against the step for one run, the null drawn's mean dashed.
std::string shareChart(const SeedCheckRun& r, ShareOf share, const std::string& what, const std::string& stem, const std::string& out) {
  const HeadSnapshot* best = strongestPreviousTokenHead(r);
  LineChart chart{r.spec.label + ", seed " + std::to_string(r.seed) + ": " + what + " of each head over training", "step", what, {}, false};
  std::map<std::pair<int, int>, ChartSeries> series;
  for (const HeadSnapshot& s : r.snapshots) {
    ChartSeries& line = series[{s.layer, s.head}];
    line.name = "head " + std::to_string(s.layer) + "." + std::to_string(s.head) +
                (s.layer == best->layer && s.head == best->head ? " (prev-token)" : "");
    line.x.push_back(s.step);
    line.y.push_back(share(s.spectrum));
  }
  for (auto& [head, line] : series) chart.series.push_back(line);
  std::vector<double> nullShares;
  for (const QkSpectrum& s : r.nullDraw) nullShares.push_back(share(s));
  const double null = mean(nullShares);
  chart.series.push_back({"null drawn (mean)", {0, double(r.snapshots.back().step)}, {null, null}, true});
  const std::string file = "charts/" + stem + "_" + r.spec.label + "_seed" + std::to_string(r.seed) + ".png";
  if (std::string why = writeLineChartPng(chart, out + "/" + file); !why.empty()) throw CliError(why, 1);
  return file;
}

// Per model and seed the eigenvalue share of every head over training, and under RoPE the phase blocks' share.
std::vector<std::string> rotationCharts(const std::vector<std::pair<std::string, Runs>>& models, const std::string& out) {
  std::vector<std::string> files;
  for (const auto& [label, runs] : models)
    for (const SeedCheckRun* r : runs) {
      files.push_back(shareChart(*r, eigenvalueShare, "imaginary share of M's eigenvalues", "rotational_share", out));
      if (!r->snapshots.front().spectrum.rope.empty())
        files.push_back(shareChart(*r, phaseBlockShare, "RoPE phase blocks' rotational share", "rope_block_share", out));
    }
  return files;
}

Finding nullFinding(const std::vector<std::pair<std::string, Runs>>& models) {
  // Per seed, the mean over every head of the induction models at step 0 (and of the nulls drawn).
  std::map<uint64_t, std::vector<double>> radius, imag, nullImag;
  for (const auto& m : models)
    for (const SeedCheckRun* r : m.second) {
      for (const HeadSnapshot& s : r->snapshots)
        if (s.step == 0) radius[r->seed].push_back(s.radiusOverNull), imag[r->seed].push_back(s.spectrum.imaginary_share);
      for (const QkSpectrum& s : r->nullDraw) nullImag[r->seed].push_back(s.imaginary_share);
    }
  auto meanPerSeed = [](const std::map<uint64_t, std::vector<double>>& bySeed, ValueRange range) {
    std::vector<double> perSeed;
    for (const auto& [seed, values] : bySeed) perSeed.push_back(mean(values));
    return seedInterval95(perSeed, range);
  };
  const SeedInterval r = meanPerSeed(radius, kUnbounded);
  std::string verdict = "partly";
  if (r.hasSpread() && r.low >= 1 / kNullTolerance && r.high <= kNullTolerance) verdict = "agrees";
  if (r.hasSpread() && (r.high < 1 / kNullTolerance || r.low > kNullTolerance)) verdict = "does not";
  return {"R3: heads start at the random-matrix (Ginibre) null", "seed 000: every head originates at the Ginibre null",
          "step 0, every head of the induction models: spectral radius / circular-law radius " + intervalText(r) +
              " (at the null: within a factor " + fixed(kNullTolerance, 2) + " of 1); imaginary share " + intervalText(meanPerSeed(imag, kShareRange)) +
              " against the null drawn's " + intervalText(meanPerSeed(nullImag, kShareRange)),
          verdict};
}

// RoPE's strongest previous-token head against `other`'s: the per-seed difference in rotational share.
Finding rotationFinding(const std::vector<std::pair<std::string, Runs>>& models, const std::string& rope, const std::string& other,
                        const std::string& otherName) {
  auto find = [&](const std::string& label) {
    for (const auto& m : models)
      if (m.first == label) return m.second;
    return Runs{};
  };
  const Runs a = find(rope), b = find(other);
  std::vector<double> difference;  // paired by seed
  for (const SeedCheckRun* x : a)
    for (const SeedCheckRun* y : b)
      if (x->seed == y->seed)
        difference.push_back(strongestPreviousTokenHead(*x)->spectrum.imaginary_share -
                             strongestPreviousTokenHead(*y)->spectrum.imaginary_share);
  const SeedInterval d = seedInterval95(difference, kDifferenceRange);
  auto share = [](const Runs& r) { return ofBest(r, [](const HeadSnapshot& s) { return s.spectrum.imaginary_share; }); };
  auto score = [](const Runs& r) { return ofBest(r, [](const HeadSnapshot& s) { return s.maps.previous_token; }); };
  const SeedInterval scoreA = score(a), scoreB = score(b);
  std::string measured = "rotational share (imaginary share of M's eigenvalues) of the strongest previous-token head: RoPE " + intervalText(share(a)) + ", " + otherName +
                         " " + intervalText(share(b)) + "; RoPE minus " + otherName + " per seed " + intervalText(d) +
                         "; previous-token score RoPE " + intervalText(scoreA) + ", " + otherName + " " + intervalText(scoreB);
  std::string verdict = positiveVerdict(d);
  if (scoreA.mean < kPreviousTokenHeadMin || scoreB.mean < kPreviousTokenHeadMin) {
    measured += " (below " + fixed(kPreviousTokenHeadMin, 1) + ": no clear previous-token head formed)";
    if (verdict == "agrees") verdict = "partly";
  }
  return {"R3: by M's eigenvalues, the RoPE previous-token head is more rotational than under " + otherName,
          "seed 000: the strongest previous-token heads are rotational under RoPE, content-like (not rotational) under " + otherName,
          measured, verdict};
}

// Under RoPE the rotation sits in the per-frequency phase channel (Im z_m), not in M's eigenvalues:
// the strongest previous-token head's block rotational share against the null drawn's, per seed.
Finding phaseFinding(const std::vector<std::pair<std::string, Runs>>& models, const std::string& rope) {
  Runs runs;
  for (const auto& m : models)
    if (m.first == rope) runs = m.second;
  std::vector<double> nullShare, difference;
  for (const SeedCheckRun* r : runs) {
    std::vector<double> heads;
    for (const QkSpectrum& s : r->nullDraw) heads.push_back(s.rope_rotational_share);
    nullShare.push_back(mean(heads));
    difference.push_back(strongestPreviousTokenHead(*r)->spectrum.rope_rotational_share - nullShare.back());
  }
  const SeedInterval d = seedInterval95(difference, kDifferenceRange);
  const SeedInterval score = ofBest(runs, [](const HeadSnapshot& s) { return s.maps.previous_token; });
  std::string measured = "RoPE block rotational share of the strongest previous-token head " +
                         intervalText(ofBest(runs, [](const HeadSnapshot& s) { return s.spectrum.rope_rotational_share; })) +
                         " against the null drawn's " + intervalText(seedInterval95(nullShare, kShareRange)) + "; difference per seed " +
                         intervalText(d) + "; previous-token score " + intervalText(score);
  std::string verdict = positiveVerdict(d);
  if (score.mean < kPreviousTokenHeadMin) {
    measured += " (below " + fixed(kPreviousTokenHeadMin, 1) + ": no clear previous-token head formed)";
    if (verdict == "agrees") verdict = "partly";
  }
  return {"R3: under RoPE the previous-token head is rotational in the per-frequency phase channel",
          "seed 000: RoPE previous-token heads are rotational; zeroing the per-frequency phase Im(M_t) removes induction", measured,
          verdict};
}

}  // namespace

std::string positiveVerdict(const SeedInterval& d) {
  if (!d.hasSpread()) return "partly";
  return d.low > 0 ? "agrees" : d.high < 0 ? "does not" : "partly";
}

StudySection spectraSection(const std::vector<SeedCheckRun>& runs, const std::string& out) {
  const auto models = byModel(runs);
  StudySection section;
  std::ostringstream md;
  md << "## R3: QK spectra by positional encoding (seed 000)\n\n" << initTable(models) << "\n" << trainedTable(models) << "\n"
     << "### Over training\n\nEvery head's rotational share at each snapshot (spectra.csv), one chart per model and seed "
        "(under RoPE a second one of the phase blocks' share); the strongest previous-token head at the last step is marked, "
        "the null drawn's mean is dashed.\n\n";
  for (const std::string& file : rotationCharts(models, out)) md << "![" << file << "](" << file << ")\n";
  md << "\nSeed 000's claim on timing (the rotational signature emerges with the behaviour, not before it) is not scored "
        "here: the charts show it per head against the step.\n";
  section.markdown = md.str();
  section.findings = {nullFinding(models), phaseFinding(models, "induction-rope"), rotationFinding(models, "induction-rope", "induction-learned", "learned absolute positions"),
                      rotationFinding(models, "induction-rope", "induction-alibi", "ALiBi")};
  section.files = {{"spectra.csv", spectraCsv(runs)}, {"null_draw.csv", nullDrawCsv(runs)}};
  return section;
}

}  // namespace attnlab::cli
