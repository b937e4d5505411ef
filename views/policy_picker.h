#pragma once
// Eviction-policy pickers that offer only what the model can run: a policy whose configure()
// refuses the model (learned_gate on a model without the retention gate) is shown disabled, with
// the policy's own reason as its tooltip, instead of failing after it is chosen.
#include <QString>
#include <vector>

class QAction;
class QComboBox;

namespace attnlab {

struct ModelConfig;

// "" when every model of `models` can run `policy` with its default settings (an empty list
// refuses nothing), else the policy's one-line reason for the first model it refuses.
QString policyRefusal(const QString& policy, const std::vector<const ModelConfig*>& models);

// Items of `picker` are policy names: each is enabled when `models` can run it, else disabled with
// the reason as tooltip (the registry's rule summary when enabled).
void markUsablePolicies(QComboBox* picker, const std::vector<const ModelConfig*>& models);
// The same for a checkable menu entry named by a policy; a refused entry is also unticked.
void markUsablePolicy(QAction* action, const std::vector<const ModelConfig*>& models);

}  // namespace attnlab
