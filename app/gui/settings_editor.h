#pragma once
// Fields for the numeric settings a registry member declares (core/settings.h SettingSpec): one
// per spec, labelled with its key, its meaning, default and range as the tooltip. An empty field
// means the default (shown greyed). Values typed for a key survive a change of member that keeps it.
#include <QHash>
#include <QWidget>
#include <vector>

#include "core/settings.h"

class QFormLayout;
class QLabel;

namespace attnlab {

class NumberField;

class SettingsEditor : public QWidget {
  Q_OBJECT
 public:
  // `prefix` is the config key of the settings, e.g. "model.attention_settings".
  explicit SettingsEditor(const QString& prefix, QWidget* parent = nullptr);

  void setSpecs(const std::vector<SettingSpec>& specs);
  void setValues(const Settings& values);
  // Reads every field into `out` (empty fields are left out) and checks it against its spec.
  // Returns "" or the first reason; each field in error is marked with its own reason.
  QString read(Settings& out, const std::string& owner) const;
  NumberField* field(const QString& key) const;
  bool hasFields() const { return !fields_.empty(); }

 signals:
  void edited();

 private:
  QString prefix_;
  QFormLayout* form_;
  QLabel* none_;
  std::vector<SettingSpec> specs_;
  std::vector<NumberField*> fields_;
  QHash<QString, QString> typed_;  // key -> text, kept across setSpecs
};

}  // namespace attnlab
