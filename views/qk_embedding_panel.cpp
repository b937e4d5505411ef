#include "qk_embedding_panel.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QVBoxLayout>

#include "colormap.h"
#include "palette.h"
#include "qk_embedding_model.h"
#include "qk_embedding_view.h"

namespace attnlab {

namespace {

using Kind = QkEmbeddingModel::Kind;
constexpr int kLegendEntries = 12;

QString swatch(const QColor& color) {
  return QStringLiteral("<span style='color:%1'>\u25a0</span>").arg(color.name());
}

}  // namespace

QkEmbeddingPanel::QkEmbeddingPanel(QkEmbeddingModel* model, QWidget* parent)
    : QWidget(parent),
      model_(model),
      colorPicker_(new QComboBox(this)),
      topK_(new QSpinBox(this)),
      caption_(new QLabel(this)),
      legend_(new QLabel(this)),
      status_(new QLabel(this)),
      view_(new QkEmbeddingView(model, this)) {
  colorPicker_->addItem(tr("position"), int(QkEmbeddingModel::ColorBy::Position));
  colorPicker_->addItem(tr("token"), int(QkEmbeddingModel::ColorBy::Token));
  colorPicker_->addItem(tr("role"), int(QkEmbeddingModel::ColorBy::Role));
  colorPicker_->setCurrentIndex(colorPicker_->findData(int(model_->colorBy())));
  colorPicker_->setToolTip(tr("What the colour of each point encodes"));
  topK_->setRange(1, QkEmbeddingModel::kMaxTopK);
  topK_->setValue(model_->topK());
  topK_->setToolTip(tr("How many of the selected query's heaviest keys get a line"));

  auto* settings = new QHBoxLayout;
  settings->addWidget(new QLabel(tr("Colour by"), this));
  settings->addWidget(colorPicker_);
  settings->addSpacing(8);
  settings->addWidget(new QLabel(tr("Top-k keys"), this));
  settings->addWidget(topK_);
  settings->addSpacing(12);
  settings->addWidget(caption_, 1);

  legend_->setTextFormat(Qt::RichText);
  legend_->setWordWrap(true);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(settings);
  layout->addWidget(legend_);
  layout->addWidget(view_, 1);
  layout->addWidget(status_);

  connect(colorPicker_, &QComboBox::currentIndexChanged, this, [this] {
    model_->setColorBy(QkEmbeddingModel::ColorBy(colorPicker_->currentData().toInt()));
  });
  connect(topK_, &QSpinBox::valueChanged, model_, &QkEmbeddingModel::setTopK);
  connect(model_, &QkEmbeddingModel::dataChanged, this, [this] {
    updateCaption();
    updateLegend();
  });
  connect(model_, &QkEmbeddingModel::colorsChanged, this, [this] {
    const QSignalBlocker quiet(colorPicker_);  // follow a setting made elsewhere
    colorPicker_->setCurrentIndex(colorPicker_->findData(int(model_->colorBy())));
    updateLegend();
  });
  connect(model_, &QkEmbeddingModel::selectionChanged, this, [this] {
    const QSignalBlocker quiet(topK_);
    topK_->setValue(model_->topK());
  });
  connect(model_, &QkEmbeddingModel::selectionChanged, this, [this] { updateStatus(QString()); });
  connect(view_, &QkEmbeddingView::hovered, this, &QkEmbeddingPanel::updateStatus);
  updateCaption();
  updateLegend();
  updateStatus(QString());
}

void QkEmbeddingPanel::updateCaption() {
  if (!model_->hasData()) {
    caption_->setText(tr("Query-key embedding: no data yet"));
    return;
  }
  const QkEmbeddingData& data = *model_->data();
  caption_->setText(tr("Layer %1, head %2 \u00b7 %3 queries, %4 keys \u00b7 %5")
                        .arg(data.layer + 1)
                        .arg(data.head + 1)
                        .arg(data.queries.size())
                        .arg(data.keys.size())
                        .arg(model_->correlationText()));
}

void QkEmbeddingPanel::updateLegend() {
  QString text = tr("\u25cf queries \u00a0 \u25a0 keys \u00a0\u00b7\u00a0 ");
  if (model_->colorBy() == QkEmbeddingModel::ColorBy::Position) {
    text += tr("position %1 0 \u2192 %2 %3").arg(swatch(rampColor(0))).arg(model_->maxPosition()).arg(swatch(rampColor(1)));
  } else {
    const QStringList names = model_->categories();
    QStringList entries;
    for (int i = 0; i < std::min<int>(names.size(), kLegendEntries); ++i)
      entries << swatch(categoryColor(i)) + QStringLiteral("\u00a0") + names[i].toHtmlEscaped();
    if (names.size() > kLegendEntries) entries << tr("+%1 more").arg(names.size() - kLegendEntries);
    text += entries.join(QStringLiteral(" \u00a0"));
  }
  legend_->setText(text);
}

void QkEmbeddingPanel::updateStatus(const QString& hovered) {
  if (!hovered.isEmpty()) {
    status_->setText(hovered);
    return;
  }
  const int query = model_->selectedQuery();
  if (query < 0) {
    status_->setText(tr("Drag to orbit, right-drag to pan, wheel to zoom; click a query (sphere) to see its top keys"));
    return;
  }
  QStringList keys;
  for (const auto& line : model_->selectedLines())
    keys << QStringLiteral("%1 (%2)").arg(model_->token(Kind::Key, line.key).position).arg(line.weight, 0, 'f', 2);
  status_->setText(tr("Selected %1 \u2192 keys at %2").arg(model_->describe(Kind::Query, query), keys.join(QStringLiteral(", "))));
}

}  // namespace attnlab
