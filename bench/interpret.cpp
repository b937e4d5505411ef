#include "interpret.h"

#include <omp.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "core/random.h"
#include "interpret/activation_hooks.h"
#include "interpret/activation_patching.h"
#include "io/config_json.h"
#include "model/model.h"
#include "train/trainer.h"

namespace attnlab::bench {
namespace {

double processCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

template <class F>
double secondsOf(F&& f) {
  const auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Wall and process CPU seconds of f (on a loaded machine the CPU time is the steadier figure).
template <class F>
std::pair<double, double> wallAndCpu(F&& f) {
  const double cpu = processCpuSeconds();
  const double wall = secondsOf(f);
  return {wall, processCpuSeconds() - cpu};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Set but wanting nothing: each site pays its test and no more.
class NoSites : public ForwardHooks {
 public:
  bool wants(HookSite, int) const override { return false; }
  void at(const Activation&) override {}
};

std::vector<int> randomPrompt(int T, int vocab, uint64_t seed) {
  Rng rng(seed);
  std::vector<int> out(T);
  for (int& id : out) id = static_cast<int>(rng.uniform() * vocab) % vocab;
  return out;
}

// A clean prompt and its copy with one token changed.
PatchingRequest pairOf(int T, int vocab, PatchSite site) {
  PatchingRequest r;
  r.clean = randomPrompt(T, vocab, 3);
  r.corrupt = r.clean;
  r.corrupt[T / 2] = (r.corrupt[T / 2] + 1) % vocab;
  r.site = site;
  return r;
}

ModelConfig gpt2SmallShape() {
  ModelConfig c;
  c.vocab = 50257;
  c.d_model = 768;
  c.n_layers = 12;
  c.n_heads = 12;
  c.d_ff = 3072;
  c.context = 1024;
  c.positional = "learned";
  c.qkv_bias = true;
  c.out_bias = true;
  return c;
}

}  // namespace

std::vector<nlohmann::json> timeInterpret(int threads, int passes, bool gpt2) {
  omp_set_num_threads(threads);
  Eigen::setNbThreads(threads);
  ExperimentConfig induction;
  if (std::string why = loadPreset("induction", induction); !why.empty()) throw std::runtime_error(why);
  induction.train.threads = threads;
  const Trainer trainer(induction);  // the preset's model (its vocabulary comes from the task), untrained
  const Model& model = trainer.model();
  const int T = trainer.sequenceLength();
  std::vector<nlohmann::json> out;

  const std::vector<int> prompt = randomPrompt(T, model.config().vocab, 1);
  NoSites none;
  std::vector<double> plain, hooked;
  for (int i = 0; i < passes; ++i) {  // interleaved, so load drifts hit both alike
    plain.push_back(1e3 * secondsOf([&] { runWithHooks(model, prompt, nullptr); }));
    hooked.push_back(1e3 * secondsOf([&] { runWithHooks(model, prompt, &none); }));
  }
  out.push_back({{"figure", "hooks_free"}, {"model", "induction preset"}, {"tokens", T}, {"threads", threads}, {"passes", passes},
                 {"no_hook_ms", median(plain)}, {"hook_wanting_nothing_ms", median(hooked)}});

  const PatchingRequest resid = pairOf(T, model.config().vocab, PatchSite::resid);
  size_t patches = 0;
  std::vector<double> sweeps, sweepsCpu;
  for (int i = 0; i < std::max(1, passes / 10); ++i) {
    const auto [wall, cpu] = wallAndCpu([&] { patches = activationPatching(model, resid).rows.size(); });
    sweeps.push_back(wall);
    sweepsCpu.push_back(cpu);
  }
  out.push_back({{"figure", "resid_sweep"}, {"model", "induction preset"}, {"tokens", T}, {"threads", threads}, {"patches", patches},
                 {"seconds", median(sweeps)}, {"cpu_seconds", median(sweepsCpu)}, {"target_seconds", 2}});

  if (gpt2) {
    Model big(gpt2SmallShape(), 1);
    const PatchingRequest heads = pairOf(20, 50257, PatchSite::head_out);
    const auto [wall, cpu] = wallAndCpu([&] { patches = activationPatching(big, heads).rows.size(); });
    out.push_back({{"figure", "gpt2_head_patching"}, {"model", "GPT-2-small shape, random weights"}, {"tokens", 20}, {"threads", threads},
                   {"patches", patches}, {"seconds", wall}, {"cpu_seconds", cpu}, {"target_seconds", 60}});
  }
  return out;
}

}  // namespace attnlab::bench
