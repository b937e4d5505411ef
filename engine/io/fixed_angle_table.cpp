#include "io/fixed_angle_table.h"

#include <numeric>

#include "io/checkpoint.h"
#include "model/attention_layer.h"

namespace attnlab {

bool hasFixedAngleTable(const Model& model) {
  const PositionalEncoding& p = model.attentionLayer(0).positional();
  return p.rotaryPairs() > 0 && p.accumulatesAngles() && !p.rotaryAnglesNeedGradient();
}

std::string writeFixedAngleTable(const std::string& dir, const Model& model) {
  if (!hasFixedAngleTable(model)) return {};
  const PositionalEncoding& p = model.attentionLayer(0).positional();
  const int vocab = model.config().vocab;
  // Each token alone as a sequence of one: its accumulated angle is its own increment, the table row.
  std::vector<int> tokens(vocab);
  std::iota(tokens.begin(), tokens.end(), 0);
  Mat angles;
  p.tokenRotaryAngles(0, Mat(), tokens.data(), nullptr, vocab, 1, angles);
  ParamStore table;
  table.add("omega_table", {vocab, p.rotaryPairs()}, false).value = angles;
  return writeSafetensors(dir + "/" + kFixedAngleTableFile, table);
}

}  // namespace attnlab
