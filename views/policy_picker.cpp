#include "policy_picker.h"

#include <QAction>
#include <QComboBox>
#include <QStandardItemModel>

#include "config/model_config.h"
#include "kv/eviction_policy.h"

namespace attnlab {

namespace {
QString summaryOf(const QString& policy) {
  for (const auto& e : EvictionPolicyRegistry::instance().entries())
    if (QString::fromStdString(e.name) == policy) return QString::fromStdString(e.summary);
  return {};
}
}  // namespace

QString policyRefusal(const QString& policy, const std::vector<const ModelConfig*>& models) {
  for (const ModelConfig* model : models) {
    const auto made = EvictionPolicyRegistry::instance().create(policy.toStdString());
    if (!made) return QStringLiteral("unknown eviction policy '%1'").arg(policy);
    if (const std::string why = made->configure({}, *model); !why.empty()) return QString::fromStdString(why);
  }
  return {};
}

void markUsablePolicies(QComboBox* picker, const std::vector<const ModelConfig*>& models) {
  auto* items = qobject_cast<QStandardItemModel*>(picker->model());
  if (!items) return;
  for (int i = 0; i < picker->count(); ++i) {
    const QString why = policyRefusal(picker->itemText(i), models);
    items->item(i)->setEnabled(why.isEmpty());
    picker->setItemData(i, why.isEmpty() ? summaryOf(picker->itemText(i)) : why, Qt::ToolTipRole);
  }
}

void markUsablePolicy(QAction* action, const std::vector<const ModelConfig*>& models) {
  const QString why = policyRefusal(action->text(), models);
  action->setEnabled(why.isEmpty());
  action->setToolTip(why.isEmpty() ? summaryOf(action->text()) : why);
  if (!why.isEmpty()) action->setChecked(false);
}

}  // namespace attnlab
