#pragma once
// Retrieval heads (Wu et al. 2024) and what RoPE contributes to them, on sequences of a task whose
// targets mark the answers (passkey, associative recall, induction):
// - a head's retrieval score is the share of answer positions at which its top key holds the answer
//   token, earlier than the first answer position (the needle it copies from);
// - knocking out the k best retrieval heads against k random heads (answer accuracy after each);
// - zeroing the k lowest-frequency RoPE pairs of q and k in chosen heads;
// - the "Im -> 0" switch: each RoPE pair scores Re(q~ conj k~ e^{i dtheta}) = a cos dtheta - b sin dtheta
//   (q~, k~ unrotated, a + ib = q~ conj k~); the switch keeps a cos dtheta, dropping the phase b.
// With k = 0 the knockouts change nothing, bit for bit.
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "data/task.h"
#include "interpret/activation_hooks.h"

namespace attnlab {

using HeadList = std::vector<std::pair<int, int>>;  // (layer, head)

// [layer][head] retrieval scores over the answers of `sequences`.
std::vector<std::vector<double>> retrievalScores(const Model& model, const std::vector<Batch>& sequences);
// The share of answer targets predicted (argmax) with `hooks` set (null: the plain model).
double answerAccuracy(const Model& model, const std::vector<Batch>& sequences, ForwardHooks* hooks);

// Zeroes the outputs of `heads` (before W_O).
EditHook headKnockout(HeadList heads);
// Zeroes the k lowest-frequency rotary pairs (the last k of the model's rotating pairs) of q and k
// in `heads`. Throws std::invalid_argument when the model has fewer rotating pairs than k.
EditHook ropePairKnockout(const Model& model, HeadList heads, int k);

// The Im -> 0 switch on every head of every layer (keepPhase = true recomputes the unchanged
// scores, a check of the arithmetic). Needs RoPE positions and softmax attention.
class RopePhaseSwitch : public ForwardHooks {
 public:
  RopePhaseSwitch(const Model& model, bool keepPhase = false);
  bool wants(HookSite site, int) const override;
  void at(const Activation& activation) override;

 private:
  const Model& model_;
  bool keepPhase_;
  float beta_;
  std::vector<float> q_, k_;
  int Hkv_ = 1;
};

struct RetrievalStudy {
  std::vector<std::vector<double>> scores;  // [layer][head]
  HeadList top;                             // the k best retrieval heads
  double accuracy = 0;                      // plain model
  double accuracy_top_masked = 0;           // the k best heads knocked out
  double accuracy_random_masked = 0;        // k random heads knocked out, mean over draws
  double accuracy_rope_knockout = 0;        // k lowest-frequency pairs zeroed in the top heads (NaN without RoPE)
  double accuracy_phase_off = 0;            // Im -> 0 in every head (NaN without RoPE softmax)
};

// `progress(done, total)` is called after each of the study's passes over the sequences; when it
// returns false the study stops there and returns what it has (the rest left as is).
RetrievalStudy retrievalStudy(const Model& model, const std::vector<Batch>& sequences, int k, uint64_t seed,
                              const std::function<bool(int, int)>& progress = {});

}  // namespace attnlab
