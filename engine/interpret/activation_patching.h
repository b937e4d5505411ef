#pragma once
// Activation patching (Meng et al. 2022; Heimersheim & Nanda 2024): run the corrupted prompt, copy
// one activation in from the clean run, and see how much of the clean answer comes back. The metric
// is the logit difference LD = logit(answer) - logit(wrong) at the last position, normalised:
//   effect = (LD_patched - LD_corrupt) / (LD_clean - LD_corrupt)   (clean = 1, corrupted = 0).
#include <functional>
#include <string>
#include <vector>

#include "model/hooks.h"
#include "model/model.h"

namespace attnlab {

// resid: the stream entering each block per layer x position, and the final residual as layer
// n_layers; attn_out, mlp_out: per layer x position; head_out, pattern (query rows), values (key
// rows, per KV head): per layer x head, or per layer x head x position.
enum class PatchSite { resid, attn_out, mlp_out, head_out, pattern, values };
inline constexpr const char* kPatchSiteNames = "resid, attn_out, mlp_out, head_out, pattern, values";
bool parsePatchSite(const std::string& name, PatchSite& site);

struct PatchingRequest {
  std::vector<int> clean, corrupt;
  std::vector<int> source;  // the run patched from; empty: the clean one (tests patch from others)
  int answer = -1;          // -1: the clean run's top prediction at the last position
  int wrong = -1;           // -1: the corrupted run's top prediction there other than the answer
  PatchSite site = PatchSite::resid;
  bool perPosition = false;  // head sites: one patch per head x position instead of per head
};

struct PatchEffect {
  int layer = 0;
  int head = -1;      // -1 for whole-stream sites
  int position = -1;  // -1 for head sites patched at every position
  double effect = 0;
};

struct PatchingResult {
  int answer = -1, wrong = -1;
  double clean_diff = 0, corrupt_diff = 0;
  std::vector<PatchEffect> rows;
};

// Throws std::invalid_argument with a one-line reason (lengths differ, a token out of range, clean
// and corrupted give the same logit difference, a site the model lacks). `progress(done, total)`
// may return false to stop: the result then holds the rows done so far.
PatchingResult activationPatching(const Model& model, const PatchingRequest& request,
                                  const std::function<bool(int, int)>& progress = {});

// The logit difference at the last position of logits [T, vocab].
double logitDifference(const Mat& logits, int answer, int wrong);
// The logit difference at the last position of `tokens` with `hooks` set, computed as the sweep
// computes it (the last position's row unembedded alone), so that effects compare bit for bit.
double lastLogitDifference(const Model& model, const std::vector<int>& tokens, ForwardHooks* hooks, int answer, int wrong);

}  // namespace attnlab
