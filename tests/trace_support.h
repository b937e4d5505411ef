#pragma once
// Runs one sequence through a model with trace capture on, for the invariant tests.
#include <vector>

#include "model/model.h"
#include "model/workspace.h"

namespace attnlab::testing {

inline Trace traceOf(const Model& model, const std::vector<int>& tokens) {
  auto ws = makeWorkspace();
  std::vector<int> targets(tokens.size(), -1);
  Trace trace;
  model.forward(*ws, tokens.data(), targets.data(), 1, static_cast<int>(tokens.size()), &trace);
  return trace;
}

}  // namespace attnlab::testing
