#include "probe_editor.h"

#include <QBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>

#include "attention_map_model.h"
#include "token_strip.h"

namespace attnlab {

ProbeEditor::ProbeEditor(const AttentionMapModel* model, QWidget* parent)
    : QWidget(parent), model_(model), field_(new QLineEdit(this)), draw_(new QPushButton(tr("Draw example"), this)),
      message_(new QLabel(this)), strip_(new TokenStrip(this)) {
  field_->setClearButtonEnabled(true);
  field_->setToolTip(tr("The input whose attention the views show. Type your own: it is traced as you type."));
  draw_->setToolTip(tr("Replace the probe with a fresh example from the task"));
  message_->setStyleSheet(QStringLiteral("color: #c0392b;"));
  message_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* rows = new QVBoxLayout(this);
  rows->setContentsMargins(0, 0, 0, 0);
  auto* layout = new QHBoxLayout;
  layout->addWidget(new QLabel(tr("Probe"), this));
  layout->addWidget(field_, 3);
  layout->addWidget(draw_);
  layout->addWidget(message_, 2);
  rows->addLayout(layout);
  rows->addWidget(strip_);
  strip_->hide();

  connect(field_, &QLineEdit::textEdited, this, [this](const QString& text) { submit(text); });
  connect(field_, &QLineEdit::editingFinished, this, [this] {
    if (message().isEmpty()) edited_ = false;  // follow the traces again
  });
  connect(draw_, &QPushButton::clicked, this, [this] {
    edited_ = false;
    showMessage({});
    emit drawRequested();
  });
  connect(model_, &AttentionMapModel::mapChanged, this, &ProbeEditor::followTrace);
  followTrace();
}

QString ProbeEditor::message() const { return message_->text(); }

void ProbeEditor::showMessage(const QString& text) {
  const QString shown = shortenLongWords(text);
  message_->setText(shown);
  message_->setToolTip(shown);
}

QString ProbeEditor::submit(const QString& text) {
  const TraceSnapshot* snapshot = model_->snapshot();
  if (!snapshot || !snapshot->vocabulary) {
    showMessage(tr("Start training first: the probe is tokenised with the task's vocabulary."));
    return message();
  }
  edited_ = true;
  std::vector<int> tokens;
  std::string error;
  if (!snapshot->vocabulary->encode(text.toStdString(), tokens, error)) {
    showMessage(QString::fromStdString(error));
    return message();
  }
  if (tokens.empty()) {
    showMessage(tr("Type at least one token."));
    return message();
  }
  if (static_cast<int>(tokens.size()) > snapshot->maxProbeLength) {
    showMessage(tr("%1 tokens: the model's context holds %2.").arg(tokens.size()).arg(snapshot->maxProbeLength));
    return message();
  }
  showMessage({});
  showTokens(*snapshot, tokens);
  emit probeEdited(tokens);
  return {};
}

void ProbeEditor::followTrace() {
  const TraceSnapshot* snapshot = model_->snapshot();
  const bool ready = snapshot && snapshot->vocabulary;
  field_->setEnabled(ready);
  draw_->setEnabled(ready);
  if (!ready) {
    field_->clear();
    field_->setPlaceholderText(tr("Start training, then type a probe here or draw one from the task"));
    showMessage({});
    edited_ = false;
    return;
  }
  const Vocabulary::Level level = snapshot->vocabulary->level();
  field_->setPlaceholderText(level == Vocabulary::Level::Word        ? tr("tokens of the task's vocabulary, separated by spaces")
                             : level == Vocabulary::Level::Subword ? tr("any text: it is split into the model's subword tokens")
                                                                   : tr("characters of the corpus"));
  if (edited_) return;  // never overwrite what the user is typing
  showTokens(*snapshot, snapshot->trace.tokens);
  const QString traced = QString::fromStdString(snapshot->vocabulary->decode(snapshot->trace.tokens));
  if (traced != field_->text()) field_->setText(traced);
}

void ProbeEditor::showTokens(const TraceSnapshot& snapshot, const std::vector<int>& tokens) {
  const bool subword = snapshot.vocabulary->level() == Vocabulary::Level::Subword;
  strip_->setVisible(subword);
  if (subword) strip_->setTokens(snapshot.vocabulary, tokens);
}

}  // namespace attnlab
