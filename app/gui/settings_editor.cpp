#include "settings_editor.h"

#include <QFormLayout>
#include <QLabel>
#include <optional>

#include "number_field.h"

namespace attnlab {

SettingsEditor::SettingsEditor(const QString& prefix, QWidget* parent)
    : QWidget(parent), prefix_(prefix), form_(new QFormLayout(this)), none_(new QLabel(tr("No settings"), this)) {
  form_->setContentsMargins(0, 0, 0, 0);
  form_->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  none_->setEnabled(false);
  form_->addRow(none_);
}

void SettingsEditor::setSpecs(const std::vector<SettingSpec>& specs) {
  for (NumberField* f : fields_) typed_[f->key()] = f->text();
  while (form_->rowCount() > 1) form_->removeRow(1);  // row 0 is the "No settings" note
  fields_.clear();
  specs_ = specs;
  for (const SettingSpec& spec : specs_) {
    const QString key = QString::fromStdString(spec.key);
    auto* f = new NumberField(prefix_ + QLatin1Char('.') + key, spec.integer ? NumberField::Kind::Integer : NumberField::Kind::Real, this);
    f->setDefault(spec.defaultValue);
    f->setText(typed_.value(f->key()));
    f->setHelp(tr("%1\ndefault %2, allowed %3 to %4%5")
                   .arg(QString::fromStdString(spec.help), NumberField::format(spec.defaultValue),
                        NumberField::format(spec.min), NumberField::format(spec.max),
                        spec.integer ? tr(", whole numbers") : QString()));
    connect(f, &QLineEdit::textEdited, this, &SettingsEditor::edited);
    auto* label = new QLabel(QString(key).replace(QLatin1Char('_'), QLatin1Char(' ')), this);
    label->setToolTip(f->toolTip());
    form_->addRow(label, f);
    fields_.push_back(f);
  }
  none_->setVisible(fields_.empty());
}

void SettingsEditor::setValues(const Settings& values) {
  typed_.clear();
  for (const auto& [key, value] : values) typed_[prefix_ + QLatin1Char('.') + QString::fromStdString(key)] = NumberField::format(value);
  for (NumberField* f : fields_) {
    f->setText(typed_.value(f->key()));
    f->setProblem({});
  }
}

QString SettingsEditor::read(Settings& out, const std::string& owner) const {
  QString first;
  for (size_t i = 0; i < fields_.size(); ++i) {
    NumberField* f = fields_[i];
    std::optional<double> value;
    QString why = f->read(value);
    if (why.isEmpty() && value) {
      why = QString::fromStdString(validateSettings({{specs_[i].key, *value}}, {specs_[i]}, owner));
      if (why.isEmpty()) out[specs_[i].key] = *value;
    }
    f->setProblem(why);
    if (first.isEmpty()) first = why;
  }
  return first;
}

NumberField* SettingsEditor::field(const QString& key) const {
  for (NumberField* f : fields_)
    if (f->key() == key) return f;
  return nullptr;
}

}  // namespace attnlab
