#include "embedding_tab.h"

#include <QContextMenuEvent>
#include <QLabel>
#include <QMenu>
#include <QOpenGLContext>
#include <QTextStream>
#include <QVBoxLayout>

#include "head_selection.h"
#include "qk_embedding_model.h"
#include "qk_embedding_panel.h"
#include "qk_embedding_source.h"
#include "qk_embedding_view.h"

namespace attnlab {

EmbeddingTab::EmbeddingTab(const ViewContext& context, QWidget* parent)
    : QWidget(parent),
      model_(new QkEmbeddingModel(this)),
      source_(new QkEmbeddingSource(context.selection, model_, this)),
      notice_(new QLabel(this)),
      error_(new QLabel(this)) {
  notice_->setAlignment(Qt::AlignCenter);
  notice_->setWordWrap(true);
  error_->setStyleSheet(QStringLiteral("color: #b00020"));
  error_->hide();
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 4, 6, 4);
  layout->addWidget(notice_, 1);
  layout->addWidget(error_);
  connect(model_, &QkEmbeddingModel::dataChanged, error_, &QLabel::hide);
  // The query picked here is the run's query, and one picked in another view is picked here.
  HeadSelection* selection = context.selection;
  connect(model_, &QkEmbeddingModel::selectionChanged, selection, [this, selection] { selection->selectQuery(model_->selectedQuery()); });
  connect(selection, &HeadSelection::queryChanged, model_, [this, selection] { model_->selectQuery(selection->query()); });
  connect(model_, &QkEmbeddingModel::dataChanged, model_, [this, selection] { model_->selectQuery(selection->query()); });
  connect(source_, &QkEmbeddingSource::failed, this, [this](const QString& message) {
    error_->setText(tr("Embedding: %1").arg(message));
    error_->show();
  });
}

void EmbeddingTab::waitForResults() { source_->job().waitForIdle(); }

void EmbeddingTab::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  if (!panel_ && notice_->text().isEmpty()) {
    if (QOpenGLContext().create()) {
      panel_ = new QkEmbeddingPanel(model_, this);
      panel_->view()->setContextMenuPolicy(Qt::PreventContextMenu);  // right-drag pans there
      static_cast<QVBoxLayout*>(layout())->insertWidget(0, panel_, 1);
      notice_->hide();
    } else {
      notice_->setText(tr("The 3D view needs OpenGL, which this display does not offer. "
                               "The embedding's numbers can still be exported as CSV."));
    }
  }
  source_->setActive(true);
}

void EmbeddingTab::hideEvent(QHideEvent* event) {
  QWidget::hideEvent(event);
  source_->setActive(false);
}

QString EmbeddingTab::exportName() const {
  const QkEmbeddingData* data = model_->data();
  return data ? QStringLiteral("embedding-L%1-H%2").arg(data->layer + 1).arg(data->head + 1) : QStringLiteral("embedding");
}

bool EmbeddingTab::hasExportData() const { return model_->hasData(); }

void EmbeddingTab::writeCsv(QTextStream& out) const {
  using Kind = QkEmbeddingModel::Kind;
  out << "kind,index,sequence,position,token,role,x,y,z\n";
  for (Kind kind : {Kind::Query, Kind::Key})
    for (int i = 0; i < model_->count(kind); ++i) {
      const EmbeddedToken& t = model_->token(kind, i);
      out << (kind == Kind::Query ? "query" : "key") << ',' << i << ',' << t.sequence << ',' << t.position << ','
          << csvField(QString::fromStdString(t.token)) << ',' << csvField(QString::fromStdString(t.role)) << ','
          << t.point.x() << ',' << t.point.y() << ',' << t.point.z() << '\n';
    }
}

void EmbeddingTab::contextMenuEvent(QContextMenuEvent* event) {
  QMenu menu(this);
  addExportActions(&menu, *this, this);
  menu.exec(event->globalPos());
}

}  // namespace attnlab
