#pragma once
// Keeps the KV-cache views of a comparison on one eviction policy, budget and settings, so that
// their runs differ only in the model (as a shared colour scale keeps their maps comparable).
// A view publishes the user's change; every other view of the link takes it over. Off: each
// view keeps its own.
#include <QObject>
#include <QString>

#include "core/settings.h"

namespace attnlab {

struct EvictionChoice {
  QString policy, budget, scope;
  Settings settings;  // the policy's own settings, as edited
  bool operator==(const EvictionChoice&) const = default;
};

class KvPolicyLink : public QObject {
  Q_OBJECT
 public:
  using QObject::QObject;

  bool isLinked() const { return linked_; }
  void setLinked(bool linked) { linked_ = linked; }
  // The last choice published (empty policy before any).
  const EvictionChoice& choice() const { return choice_; }
  // A view's user changed its choice: the others follow while linked.
  void publish(const EvictionChoice& choice, const QObject* from);

 signals:
  void chosen(const attnlab::EvictionChoice& choice, const QObject* from);

 private:
  bool linked_ = true;
  EvictionChoice choice_;
};

}  // namespace attnlab
