#pragma once
// The two seed checks of the analyses issue, on freshly trained toy models:
//   (a) seed 000: at initialisation every head sits at the Ginibre null; after training, the
//       strongest previous-token head is rotational under RoPE and content-like (not rotational)
//       under learned absolute positions and ALiBi. Trains a 2-layer attention-only model on the
//       induction task once per positional encoding and follows spectra and maps over training.
//   (b) seed 001: head-drop curves in ascending, descending and random order of importance; is
//       ascending the most resilient order? Measured on every model trained here.
// The result is a short Markdown report and CSV tables (written by the caller).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace attnlab {

struct SeedCheckOptions {
  bool quick = false;  // fewer steps and cases (about 2 minutes on 2 free cores)
  int threads = 2;
  uint64_t seed = 1;
  std::function<void(const std::string&)> progress;  // one line per stage, may be empty
};

struct SeedCheckFile {
  std::string name;  // e.g. "report.md"
  std::string text;
};

// Throws std::runtime_error (from training) only on a divergence; the report says what was found.
std::vector<SeedCheckFile> runSeedChecks(const SeedCheckOptions& options);

}  // namespace attnlab
