#include "summary.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <vector>

#include "train/benchmark.h"
#include "workloads.h"

namespace attnlab::bench {
namespace {

// Per (workload, threads, side): each repetition's figure.
struct Samples {
  std::vector<double> tokensPerSecond, tokensPerCpuSecond, traceMs, traceCpuMs, peakMb, peakGflopsPerCore;
  int seqLen = 0;
  double flopsPerToken = 0;  // model FLOPs of one training token (attnlab's lines carry it)
};
using Key = std::tuple<std::string, int, std::string>;

// Per (model, policy) of the decoding benchmark: each repetition's figure.
struct DecodingSamples {
  std::string budget;
  std::vector<double> tokensPerSecond, tokensPerCpuSecond;
};
using DecodingKey = std::pair<std::string, std::string>;

// The weight-streaming bound of each decoding repetition (decoding.h).
struct DecodingBound {
  double weightBytes = 0;
  std::vector<double> tokensPerSecond;
};

std::string number(double v, int decimals) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.*f", decimals, v);
  const std::string s = text;
  if (decimals != 0 || s.size() <= 3) return s;
  return s.substr(0, s.size() - 3) + "," + s.substr(s.size() - 3);  // thousands, as 12,345
}

std::string cell(const std::vector<double>& values, int decimals) {
  if (values.empty()) return "—";
  const Spread s = spreadOf(values);
  return number(s.median, decimals) + " (" + number(s.min, decimals) + "–" + number(s.max, decimals) + ")";
}

std::optional<double> median(const std::vector<double>& values) {
  if (values.empty()) return std::nullopt;
  return spreadOf(values).median;
}

// Ratios count against the strongest peer: of PyTorch as shipped and PyTorch with attnlab's heap
// settings (torch_peer.py --heap-reuse), the one with the better median of `figure`; a row that
// counts against the second says so.
struct Peer {
  const Samples& samples;
  std::string note;  // "" or "; PyTorch with heap reuse"
};
Peer strongest(const Samples& shipped, const Samples& heapReuse, std::vector<double> Samples::*figure, bool higherIsBetter) {
  const auto a = median(shipped.*figure), b = median(heapReuse.*figure);
  if (b && (!a || (higherIsBetter ? *b > *a : *b < *a))) return {heapReuse, "; PyTorch with heap reuse"};
  return {shipped, ""};
}

// Training-throughput targets of the issue: ours / PyTorch at the same thread count.
std::optional<double> throughputTarget(const std::string& workload, int threads) {
  if (workload == "default" || workload == "larger" || workload == "sigmoid_rope") return threads == 1 ? 1.5 : 2.0;
  if (workload.rfind("long_", 0) == 0) return 2.0;
  return std::nullopt;
}
// Model FLOP/s as a share of the measured peak: >= 75% at one thread, >= 70% at more.
std::optional<double> mfuTarget(const std::string& workload, int threads) {
  if (workload != "default" && workload != "larger") return std::nullopt;
  return threads == 1 ? 0.75 : 0.70;
}
constexpr double kTraceTargetMs = 3.0;   // default model, context 128
constexpr double kPeakTargetMb = 300.0;  // default-preset training
constexpr double kLongMemoryShare = 0.25;  // long_2048: peak memory against PyTorch's
constexpr double kDecodeTargetTokensPerSecond = 25000.0;  // full cache, single stream
constexpr double kPolicyTargetRatio = 0.75;               // each policy within 25% of the full cache

// The decoding table: each policy beside the full cache of the same model.
void writeDecoding(const std::map<DecodingKey, DecodingSamples>& samples, const DecodingBound& bound, std::ostream& out) {
  out << "\n| cached decoding, 1 thread | budget | tokens/s median (min–max) | ratio to full | tokens per CPU-second | "
         "ratio to full (CPU) | target |\n"
      << "| --- | --- | --- | --- | --- | --- | --- |\n";
  for (const std::string model : {"default", "retention_gate"}) {
    const auto full = samples.find({model, "full"});
    std::vector<std::pair<DecodingKey, DecodingSamples>> rows;  // the full cache first
    if (full != samples.end()) rows.push_back(*full);
    for (const auto& row : samples)
      if (row.first.first == model && row.first.second != "full") rows.push_back(row);
    for (const auto& [key, s] : rows) {
      const bool isFull = key.second == "full";
      const auto ot = median(s.tokensPerSecond), oc = median(s.tokensPerCpuSecond);
      std::optional<double> ft, fc;
      if (full != samples.end()) ft = median(full->second.tokensPerSecond), fc = median(full->second.tokensPerCpuSecond);
      std::string status = "—";
      if (isFull && model == "default")
        status = ">= 25,000 tokens/s: " + std::string(*ot >= kDecodeTargetTokensPerSecond ? "met" : "not met");
      else if (!isFull && ft)
        status = ">= 0.75x full: " + std::string(*ot / *ft >= kPolicyTargetRatio ? "met" : "not met");
      const std::string name = key.second + (model == "default" ? "" : " (default model + retention gate)");
      out << "| " << name << ", " << s.tokensPerSecond.size() << " reps | " << s.budget << " | " << cell(s.tokensPerSecond, 0)
          << " | " << (ft && !isFull ? number(*ot / *ft, 2) + "x" : "—") << " | " << cell(s.tokensPerCpuSecond, 0) << " | "
          << (fc && !isFull ? number(*oc / *fc, 2) + "x" : "—") << " | " << status << " |\n";
    }
  }
  const auto full = samples.find({"default", "full"});
  if (bound.tokensPerSecond.empty() || full == samples.end()) return;
  const double limit = *median(bound.tokensPerSecond), reached = *median(full->second.tokensPerSecond);
  out << "\nA decoding step reads " << number(bound.weightBytes / 1e6, 2) << " MB of weights; one vector-matrix product "
      << "over that many bytes (Eigen's, the one decoding runs), with nothing else, runs "
      << cell(bound.tokensPerSecond, 0) << " times a second on this thread: with float32 weights, a single stream "
      << "cannot decode faster here without a faster product. The full cache reaches " << number(100.0 * reached / limit, 0)
      << "% of it.\n";
}

}  // namespace

std::string summarize(std::istream& results, std::ostream& out) {
  std::map<Key, Samples> samples;
  std::map<DecodingKey, DecodingSamples> decoding;
  DecodingBound bound;
  std::set<int> threads;
  std::string line;
  int lineNumber = 0;
  while (std::getline(results, line)) {
    ++lineNumber;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_discarded() && j.is_object() && j.value("kind", "") == "decoding_bound" && j.contains("bound_tokens_per_second")) {
      bound.weightBytes = j.value("weight_bytes_per_token", 0.0);
      bound.tokensPerSecond.push_back(j["bound_tokens_per_second"].get<double>());
      continue;
    }
    if (j.is_discarded() || !j.is_object() || !j.contains("side") || !j.contains("tokens_per_second"))
      return "line " + std::to_string(lineNumber) + " is not a benchmark result";
    if (j.value("kind", "") == "decoding") {
      DecodingSamples& d = decoding[{j["model"].get<std::string>(), j["policy"].get<std::string>()}];
      d.budget = j["budget"].get<std::string>();
      d.tokensPerSecond.push_back(j["tokens_per_second"]["median"].get<double>());
      d.tokensPerCpuSecond.push_back(j["tokens_per_cpu_second"]["median"].get<double>());
      continue;
    }
    Samples& s = samples[{j["workload"].get<std::string>(), j["threads"].get<int>(), j["side"].get<std::string>()}];
    threads.insert(j["threads"].get<int>());
    s.seqLen = j.value("seq_len", 0);
    s.tokensPerSecond.push_back(j["tokens_per_second"]["median"].get<double>());
    if (j.contains("tokens_per_cpu_second")) s.tokensPerCpuSecond.push_back(j["tokens_per_cpu_second"]["median"].get<double>());
    if (j.contains("trace_ms")) s.traceMs.push_back(j["trace_ms"]["median"].get<double>());
    if (j.contains("trace_cpu_ms")) s.traceCpuMs.push_back(j["trace_cpu_ms"]["median"].get<double>());
    s.peakMb.push_back(j["peak_rss_mb"].get<double>());
    if (j.contains("peak_gflops_per_core")) s.peakGflopsPerCore.push_back(j["peak_gflops_per_core"].get<double>());
    s.flopsPerToken = j.value("model_flops_per_token", s.flopsPerToken);
  }

  if (!samples.empty())
    out << "| workload | threads | measure | attnlab median (min–max) | PyTorch median (min–max) | ratio | target |\n"
      << "| --- | --- | --- | --- | --- | --- | --- |\n";
  for (const Workload& w : workloads())
    for (int t : threads) {
      const auto ours = samples.find({w.name, t, "attnlab"});
      if (ours == samples.end()) continue;
      const Samples none;
      const auto sideOf = [&](const char* side) -> const Samples& {
        const auto it = samples.find({w.name, t, side});
        return it == samples.end() ? none : it->second;
      };
      const Samples &shipped = sideOf("pytorch"), &heapReuse = sideOf("pytorch, heap reuse");
      const Peer fastest = strongest(shipped, heapReuse, &Samples::tokensPerSecond, true);
      const Samples& peer = fastest.samples;
      const Samples& o = ours->second;
      const std::string lead = "| " + w.name + " | " + std::to_string(t) + " | ";
      const std::string reps = std::to_string(o.tokensPerSecond.size()) + " reps";

      // tokens/s: higher is better, ratio = ours / PyTorch
      std::string ratio = "—", status = "—";
      const auto ot = median(o.tokensPerSecond), pt = median(peer.tokensPerSecond);
      if (ot && pt) ratio = number(*ot / *pt, 2) + "x";
      if (const auto target = throughputTarget(w.name, t)) {
        if (!pt) status = ">= " + number(*target, 1) + "x: no PyTorch figure";
        else status = ">= " + number(*target, 1) + "x: " + (*ot / *pt >= *target ? "met" : "not met");
      }
      out << lead << "training tokens/s, " << reps << fastest.note << " | " << cell(o.tokensPerSecond, 0) << " | "
          << cell(peer.tokensPerSecond, 0) << " | " << ratio << " | " << status << " |\n";

      // the same per second of CPU time (all threads): what the load does not take away
      const Peer frugal = strongest(shipped, heapReuse, &Samples::tokensPerCpuSecond, true);
      const auto oc = median(o.tokensPerCpuSecond), pc = median(frugal.samples.tokensPerCpuSecond);
      out << lead << "training tokens per CPU-second" << frugal.note << " | " << cell(o.tokensPerCpuSecond, 0) << " | "
          << cell(frugal.samples.tokensPerCpuSecond, 0)
          << " | " << (oc && pc ? number(*oc / *pc, 2) + "x" : "—") << " | (load-independent view) |\n";

      // model FLOP/s over the peak of the cores used (both sides run the same model FLOPs); the
      // peak is per second of CPU time, so the per-CPU-second share is the load-independent one
      if (const auto peak = median(o.peakGflopsPerCore); peak && o.flopsPerToken > 0) {
        const auto share = [&](std::optional<double> tokens, int cores) {
          return tokens ? number(100 * *tokens * o.flopsPerToken / (*peak * 1e9 * cores), 0) + "%" : "—";
        };
        status = "—";
        if (const auto target = mfuTarget(w.name, t))
          status = ">= " + number(100 * *target, 0) + "%: " + (*ot * o.flopsPerToken / (*peak * 1e9 * t) >= *target ? "met" : "not met");
        out << lead << "model FLOP/s / peak (" << number(o.flopsPerToken / 1e6, 2) << " MFLOP per token; peak "
            << number(*peak, 1) << " GFLOP/s per core) | " << share(ot, t) << " | " << share(pt, t) << " | — | " << status << " |\n";
        out << lead << "model FLOPs per CPU-second / peak | " << share(oc, 1) << " | " << share(pc, 1)
            << " | — | (load-independent view) |\n";
      }

      // probe trace: lower is better, ratio = PyTorch / ours (how many times faster)
      const Peer quickest = strongest(shipped, heapReuse, &Samples::traceMs, false);
      const auto om = median(o.traceMs), pm = median(quickest.samples.traceMs);
      ratio = om && pm ? number(*pm / *om, 2) + "x faster" : "—";
      status = w.name == "default" && om ? "<= 3 ms: " + std::string(*om <= kTraceTargetMs ? "met" : "not met") : "—";
      out << lead << "probe trace ms (context " << o.seqLen << ")" << quickest.note << " | " << cell(o.traceMs, 2) << " | "
          << cell(quickest.samples.traceMs, 2) << " | " << ratio << " | " << status << " |\n";

      const Peer lightest = strongest(shipped, heapReuse, &Samples::traceCpuMs, false);
      const auto ocm = median(o.traceCpuMs), pcm = median(lightest.samples.traceCpuMs);
      out << lead << "probe trace CPU ms" << lightest.note << " | " << cell(o.traceCpuMs, 2) << " | "
          << cell(lightest.samples.traceCpuMs, 2) << " | "
          << (ocm && pcm ? number(*pcm / *ocm, 2) + "x less" : "—") << " | (load-independent view) |\n";

      // peak resident memory of the whole process: lower is better
      const Peer smallest = strongest(shipped, heapReuse, &Samples::peakMb, false);
      const auto orss = median(o.peakMb), prss = median(smallest.samples.peakMb);
      ratio = orss && prss ? number(*orss / *prss, 2) + "x the memory" : "—";
      status = w.name == "default" && orss ? "<= 300 MB: " + std::string(*orss <= kPeakTargetMb ? "met" : "not met") : "—";
      if (w.name == "long_2048" && orss && prss)
        status = "<= 0.25x PyTorch's: " + std::string(*orss <= kLongMemoryShare * *prss ? "met" : "not met");
      out << lead << "peak RSS MB" << smallest.note << " | " << cell(o.peakMb, 0) << " | " << cell(smallest.samples.peakMb, 0) << " | " << ratio << " | "
          << status << " |\n";
    }
  if (!decoding.empty()) writeDecoding(decoding, bound, out);
  return {};
}

}  // namespace attnlab::bench
