#include "interpret/activation_hooks.h"

#include <algorithm>
#include <stdexcept>

#include "model/workspace.h"

namespace attnlab {

Mat RecordedActivation::headRows(int head) const {
  Mat out(T, width);
  for (int t = 0; t < T; ++t) std::copy_n(row(head, t), width, out.row(t).data());
  return out;
}

void ActivationRecorder::at(const Activation& a) {
  RecordedActivation r{a.site, a.layer, a.T, a.heads, a.width, a.headMajor, {}};
  r.data.assign(a.data, a.data + static_cast<size_t>(a.T) * a.heads * a.width);  // batch element 0 comes first in both layouts
  for (auto& old : recorded_)
    if (old.site == a.site && old.layer == a.layer) {
      old = std::move(r);
      return;
    }
  recorded_.push_back(std::move(r));
}

const RecordedActivation& ActivationRecorder::get(HookSite site, int layer) const {
  for (const auto& r : recorded_)
    if (r.site == site && r.layer == layer) return r;
  throw std::invalid_argument("hook point " + hookName(site, layer) + " was not recorded (the model has no such activation)");
}

bool ActivationPatcher::wants(HookSite site, int layer) const {
  return std::any_of(patches_.begin(), patches_.end(), [&](const Patch& p) { return p.site == site && p.layer == layer; });
}

void ActivationPatcher::at(const Activation& a) {
  for (const Patch& p : patches_) {
    if (p.site != a.site || p.layer != a.layer) continue;
    const RecordedActivation& from = source_.get(a.site, a.layer);
    if (from.T != a.T || from.heads != a.heads || from.width != a.width)
      throw std::invalid_argument("cannot patch " + hookName(a.site, a.layer) + ": the two runs differ in length");
    const int firstHead = p.head < 0 ? 0 : p.head, lastHead = p.head < 0 ? a.heads - 1 : p.head;
    for (int h = firstHead; h <= lastHead; ++h) {
      if (p.positions.empty())
        for (int t = 0; t < a.T; ++t) std::copy_n(from.row(h, t), a.width, a.row(0, h, t));
      for (int t : p.positions) std::copy_n(from.row(h, t), a.width, a.row(0, h, t));
    }
  }
}

bool HookChain::wants(HookSite site, int layer) const {
  return std::any_of(hooks_.begin(), hooks_.end(), [&](const ForwardHooks* h) { return h->wants(site, layer); });
}

void HookChain::at(const Activation& a) {
  for (ForwardHooks* h : hooks_)
    if (h->wants(a.site, a.layer)) h->at(a);
}

Mat runWithHooks(const Model& model, const std::vector<int>& tokens, ForwardHooks* hooks) {
  auto ws = makeWorkspace();
  ws->hooks = hooks;
  const std::vector<int> targets(tokens.size(), -1);
  model.forward(*ws, tokens.data(), targets.data(), 1, static_cast<int>(tokens.size()));
  return ws->logits;
}

}  // namespace attnlab
