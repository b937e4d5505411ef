#include "selection_bar.h"

#include <QButtonGroup>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QRadioButton>
#include <QSignalBlocker>

#include "attention_map_model.h"
#include "head_selection.h"

namespace attnlab {

SelectionBar::SelectionBar(AttentionMapModel* model, HeadSelection* selection, QWidget* parent)
    : QWidget(parent),
      model_(model),
      selection_(selection),
      layerPicker_(new QComboBox(this)),
      headPicker_(new QComboBox(this)),
      linear_(new QRadioButton(tr("linear"), this)),
      log_(new QRadioButton(tr("log"), this)),
      caption_(new QLabel(this)) {
  auto* scale = new QButtonGroup(this);
  scale->addButton(linear_);
  scale->addButton(log_);
  linear_->setChecked(true);
  linear_->setToolTip(tr("Colour proportional to the weight, up to the map's largest weight"));
  log_->setToolTip(tr("Colour by decades of weight (log10), %1 decades below the largest: small weights become visible")
                       .arg(AttentionMapModel::kLogDecades));

  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(new QLabel(tr("Layer"), this));
  layout->addWidget(layerPicker_);
  layout->addSpacing(8);
  layout->addWidget(new QLabel(tr("Head"), this));
  layout->addWidget(headPicker_);
  layout->addSpacing(16);
  layout->addWidget(new QLabel(tr("Colour scale"), this));
  layout->addWidget(linear_);
  layout->addWidget(log_);
  layout->addSpacing(16);
  layout->addWidget(caption_, 1);

  layerPicker_->setToolTip(tr("Transformer block whose attention is shown"));
  headPicker_->setToolTip(tr("Attention head within the layer"));
  caption_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  connect(layerPicker_, &QComboBox::currentIndexChanged, this, [this](int layer) {
    selection_->select(layer, std::min(selection_->head(), model_->headCount(layer) - 1));
  });
  connect(headPicker_, &QComboBox::currentIndexChanged, this,
          [this](int head) { selection_->select(selection_->layer(), head); });
  connect(log_, &QRadioButton::toggled, this, [this](bool on) {
    model_->setColourScale(on ? AttentionMapModel::ColourScale::Log : AttentionMapModel::ColourScale::Linear);
  });
  const auto follow = [this] {
    syncPickers();
    updateCaption();
  };
  connect(model_, &AttentionMapModel::mapChanged, this, follow);
  connect(selection_, &HeadSelection::headChanged, this, follow);
  syncPickers();
  updateCaption();
}

void SelectionBar::syncPickers() {
  auto sync = [](QComboBox* picker, int count, int current) {
    const QSignalBlocker quiet(picker);  // only the user's choices should reach the model
    if (picker->count() != count) {
      picker->clear();
      for (int i = 0; i < count; ++i) picker->addItem(QString::number(i + 1));
    }
    picker->setCurrentIndex(count > 0 ? current : -1);
    picker->setEnabled(count > 0);
  };
  sync(layerPicker_, model_->layerCount(), selection_->layer());
  sync(headPicker_, model_->headCount(selection_->layer()), selection_->head());
  const QSignalBlocker quiet(log_);
  (model_->colourScale() == AttentionMapModel::ColourScale::Log ? log_ : linear_)->setChecked(true);
}

void SelectionBar::updateCaption() {
  if (!model_->hasMap()) {
    caption_->setText(tr("Attention of the probe input"));
    return;
  }
  caption_->setText((model_->isOpenedModel() ? tr("%1 attention of %2 \u00b7 %3 tokens") : tr("%1 attention after %2 \u00b7 %3 tokens"))
                        .arg(selection_->shown().variant())
                        .arg(model_->stageText().toHtmlEscaped())
                        .arg(selection_->shown().size()) +
                    (model_->isSwitchedOff(selection_->layer(), selection_->head())
                         ? tr(" \u00b7 <b>this head is switched off</b> (Head table)")
                         : QString()));
}

}  // namespace attnlab
