#include "positional/positional.h"

namespace attnlab {
namespace {

// NoPE: no positional information; causality alone tells tokens apart.
class NoPositional : public PositionalEncoding {
 public:
  std::string configure(const ModelConfig&, ParamStore&) override { return {}; }
};

ATTNLAB_REGISTER(PositionalRegistry, "none", "NoPE: no positional signal; the causal mask alone breaks symmetry",
                 [] { return std::make_unique<NoPositional>(); });

}  // namespace
}  // namespace attnlab
