#include "kv_policy_link.h"

namespace attnlab {

void KvPolicyLink::publish(const EvictionChoice& choice, const QObject* from) {
  if (!linked_ || choice == choice_) return;  // the echo of a view taking over the choice ends here
  choice_ = choice;
  emit chosen(choice, from);
}

}  // namespace attnlab
