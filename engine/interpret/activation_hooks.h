#pragma once
// The hooks every causal analysis is built on (model/hooks.h): one records a forward pass's
// activations, one copies recorded rows into another pass, one runs an arbitrary edit.
#include <functional>
#include <vector>

#include "model/hooks.h"
#include "model/model.h"

namespace attnlab {

// A copy of one activation of batch element 0.
struct RecordedActivation {
  HookSite site;
  int layer = 0;
  int T = 0, heads = 1, width = 0;
  bool headMajor = false;
  std::vector<float> data;
  const float* row(int head, int t) const {
    const size_t r = headMajor ? static_cast<size_t>(head) * T + t : static_cast<size_t>(t) * heads + head;
    return data.data() + r * width;
  }
  // The [T, width] rows of one head (the whole stream for heads = 1).
  Mat headRows(int head) const;
};

class ActivationRecorder : public ForwardHooks {
 public:
  using Filter = std::function<bool(HookSite, int)>;
  explicit ActivationRecorder(Filter filter = {}) : filter_(std::move(filter)) {}
  bool wants(HookSite site, int layer) const override { return !filter_ || filter_(site, layer); }
  void at(const Activation& activation) override;
  // The recorded activation, or throws std::invalid_argument naming the missing hook point.
  const RecordedActivation& get(HookSite site, int layer) const;

 private:
  Filter filter_;
  std::vector<RecordedActivation> recorded_;
};

// One replacement: the rows of `head` (-1: every head) at `positions` (empty: every position) of a
// hook point, taken from a recorded run of the same length.
struct Patch {
  HookSite site;
  int layer = 0;
  int head = -1;
  std::vector<int> positions;
};

class ActivationPatcher : public ForwardHooks {
 public:
  ActivationPatcher(const ActivationRecorder& source, std::vector<Patch> patches) : source_(source), patches_(std::move(patches)) {}
  bool wants(HookSite site, int layer) const override;
  void at(const Activation& activation) override;

 private:
  const ActivationRecorder& source_;
  std::vector<Patch> patches_;
};

// Runs `edit` at the hook points `where` accepts (ablations, knockouts, nudges for finite differences).
class EditHook : public ForwardHooks {
 public:
  using Where = std::function<bool(HookSite, int)>;
  using Edit = std::function<void(const Activation&)>;
  EditHook(Where where, Edit edit) : where_(std::move(where)), edit_(std::move(edit)) {}
  bool wants(HookSite site, int layer) const override { return where_(site, layer); }
  void at(const Activation& activation) override { edit_(activation); }

 private:
  Where where_;
  Edit edit_;
};

// Several hooks on one pass, called in order at each site (an edit, then a recorder that sees it).
class HookChain : public ForwardHooks {
 public:
  explicit HookChain(std::vector<ForwardHooks*> hooks) : hooks_(std::move(hooks)) {}
  bool wants(HookSite site, int layer) const override;
  void at(const Activation& activation) override;

 private:
  std::vector<ForwardHooks*> hooks_;
};

// One forward pass of `tokens` (batch 1, no targets) with `hooks` set; returns the logits [T, vocab].
Mat runWithHooks(const Model& model, const std::vector<int>& tokens, ForwardHooks* hooks);

}  // namespace attnlab
