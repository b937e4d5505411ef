#include "attention_panel.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QVBoxLayout>

#include "attention_heatmap_view.h"
#include "attention_map_model.h"

namespace attnlab {

AttentionPanel::AttentionPanel(AttentionMapModel* model, QWidget* parent)
    : QWidget(parent),
      model_(model),
      layerPicker_(new QComboBox(this)),
      headPicker_(new QComboBox(this)),
      caption_(new QLabel(this)),
      heatmap_(new AttentionHeatmapView(model, this)) {
  auto* pickers = new QHBoxLayout;
  pickers->addWidget(new QLabel(tr("Layer"), this));
  pickers->addWidget(layerPicker_);
  pickers->addSpacing(8);
  pickers->addWidget(new QLabel(tr("Head"), this));
  pickers->addWidget(headPicker_);
  pickers->addSpacing(12);
  pickers->addWidget(caption_, 1);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(pickers);
  layout->addWidget(heatmap_, 1);

  layerPicker_->setToolTip(tr("Transformer block whose attention is shown"));
  headPicker_->setToolTip(tr("Attention head within the layer"));
  caption_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  connect(layerPicker_, &QComboBox::currentIndexChanged, this, [this](int layer) {
    model_->select(layer, std::min(model_->selectedHead(), model_->headCount(layer) - 1));
  });
  connect(headPicker_, &QComboBox::currentIndexChanged, this,
          [this](int head) { model_->select(model_->selectedLayer(), head); });
  connect(model_, &AttentionMapModel::mapChanged, this, [this] {
    syncPickers();
    updateCaption();
  });
  syncPickers();
  updateCaption();
}

void AttentionPanel::syncPickers() {
  auto sync = [](QComboBox* picker, int count, int current) {
    const QSignalBlocker quiet(picker);  // only the user's choices should reach the model
    if (picker->count() != count) {
      picker->clear();
      for (int i = 0; i < count; ++i) picker->addItem(QString::number(i + 1));
    }
    picker->setCurrentIndex(count > 0 ? current : -1);
    picker->setEnabled(count > 0);
  };
  sync(layerPicker_, model_->layerCount(), model_->selectedLayer());
  sync(headPicker_, model_->headCount(model_->selectedLayer()), model_->selectedHead());
}

void AttentionPanel::updateCaption() {
  if (!model_->hasMap()) {
    caption_->setText(tr("Attention of the probe input"));
    return;
  }
  caption_->setText(tr("%1 attention after step %2 \u00b7 rows: queries, columns: keys")
                        .arg(model_->variant())
                        .arg(model_->step()));
}

}  // namespace attnlab
