#include "open_model_dialog.h"

#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

#include "hf/hf_cache.h"
#include "hf/hf_model.h"

namespace attnlab {

namespace {

enum Column { Name, Architecture, Size, Parameters, ColumnCount };
constexpr int kPathRole = Qt::UserRole;
constexpr int kProblemRole = Qt::UserRole + 1;

QString bytesText(uint64_t bytes) {
  if (bytes >= (1ull << 30)) return QObject::tr("%1 GB").arg(bytes / double(1ull << 30), 0, 'f', 2);
  return QObject::tr("%1 MB").arg(bytes / double(1ull << 20), 0, 'f', bytes >= (100ull << 20) ? 0 : 1);
}

QString parametersText(uint64_t n) {
  if (n == 0) return QStringLiteral("\u2013");
  if (n >= 1000000000ull) return QObject::tr("%1 B").arg(n / 1e9, 0, 'f', 2);
  return QObject::tr("%1 M").arg(n / 1e6, 0, 'f', n >= 100000000ull ? 0 : 1);
}

}  // namespace

OpenModelDialog::OpenModelDialog(const QString& cacheRoot, QWidget* parent)
    : QDialog(parent), table_(new QTableWidget(this)), problem_(new QLabel(this)) {
  setWindowTitle(tr("Open Model"));
  auto* intro = new QLabel(tr("Models in the Hugging Face cache (%1). Supported architectures: %2.")
                               .arg(QDir::toNativeSeparators(cacheRoot), QString::fromStdString(hf::supportedArchitectures())),
                           this);
  intro->setWordWrap(true);

  const std::vector<hf::CachedModel> models = hf::scanHfCache(cacheRoot.toStdString());
  table_->setColumnCount(ColumnCount);
  table_->setHorizontalHeaderLabels({tr("Model"), tr("Architecture"), tr("Size"), tr("Parameters")});
  table_->setRowCount(static_cast<int>(models.size()));
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setSectionResizeMode(Name, QHeaderView::Stretch);
  for (int row = 0; row < static_cast<int>(models.size()); ++row) {
    const hf::CachedModel& m = models[row];
    const QString type = m.model_type.empty() ? tr("unknown") : QString::fromStdString(m.model_type);
    const QStringList cells = {QString::fromStdString(m.name), type, bytesText(m.bytes), parametersText(m.parameters)};
    for (int col = 0; col < ColumnCount; ++col) {
      auto* item = new QTableWidgetItem(cells[col]);
      item->setData(kPathRole, QString::fromStdString(m.path));
      item->setData(kProblemRole, QString::fromStdString(m.problem));
      if (!m.problem.empty()) {
        item->setForeground(palette().color(QPalette::Disabled, QPalette::Text));
        item->setToolTip(QString::fromStdString(m.problem));
      }
      table_->setItem(row, col, item);
    }
  }
  if (models.empty()) problem_->setText(tr("No models found there. Choose a folder with config.json and model.safetensors."));
  problem_->setWordWrap(true);

  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Open | QDialogButtonBox::Cancel, this);
  QPushButton* openButton = buttons->button(QDialogButtonBox::Open);
  openButton->setEnabled(false);
  QPushButton* folder = buttons->addButton(tr("Choose &Folder\u2026"), QDialogButtonBox::ActionRole);
  connect(folder, &QPushButton::clicked, this, &OpenModelDialog::browse);
  connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  connect(table_, &QTableWidget::currentCellChanged, this, [this, openButton](int row) {
    chooseRow(row);
    openButton->setEnabled(!chosen_.isEmpty());
  });
  connect(table_, &QTableWidget::cellDoubleClicked, this, [this](int row) {
    chooseRow(row);
    if (!chosen_.isEmpty()) accept();
  });

  auto* layout = new QVBoxLayout(this);
  layout->addWidget(intro);
  layout->addWidget(table_);
  layout->addWidget(problem_);
  layout->addWidget(buttons);
  resize(760, 420);
}

void OpenModelDialog::chooseRow(int row) {
  chosen_.clear();
  QTableWidgetItem* item = row >= 0 ? table_->item(row, Name) : nullptr;
  if (!item) return;
  const QString problem = item->data(kProblemRole).toString();
  problem_->setText(problem.isEmpty() ? QDir::toNativeSeparators(item->data(kPathRole).toString()) : tr("Will not open: %1").arg(problem));
  if (problem.isEmpty()) chosen_ = item->data(kPathRole).toString();
}

void OpenModelDialog::browse() {
  const QString dir = QFileDialog::getExistingDirectory(this, tr("Open Model Folder"), QDir::homePath());
  if (dir.isEmpty()) return;
  chosen_ = dir;
  accept();
}

}  // namespace attnlab
