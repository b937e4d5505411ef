#include "queued_call.h"

namespace attnlab {

std::mutex& queuedCallHandoff() {
  static std::mutex handoff;
  return handoff;
}

}  // namespace attnlab
