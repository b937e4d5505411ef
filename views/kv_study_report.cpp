#include "kv_study_report.h"

#include <QDialogButtonBox>
#include <QDir>
#include <QFile>
#include <QHeaderView>
#include <QTabWidget>
#include <QTableWidget>
#include <QTextBrowser>
#include <QTextStream>
#include <QUrl>
#include <QVBoxLayout>

namespace attnlab {

KvStudyReport::KvStudyReport(QWidget* parent) : QDialog(parent), tabs_(new QTabWidget(this)) {
  setWindowTitle(tr("Live-cache study report"));
  resize(1100, 800);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(tabs_, 1);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  layout->addWidget(buttons);
}

QStringList KvStudyReport::splitCsvLine(const QString& line) {
  QStringList fields;
  QString field;
  bool quoted = false;
  for (int i = 0; i < line.size(); ++i) {
    const QChar c = line[i];
    if (quoted) {
      if (c == QLatin1Char('"') && i + 1 < line.size() && line[i + 1] == QLatin1Char('"')) field += line[++i];
      else if (c == QLatin1Char('"')) quoted = false;
      else field += c;
    } else if (c == QLatin1Char('"')) {
      quoted = true;
    } else if (c == QLatin1Char(',')) {
      fields << field;
      field.clear();
    } else {
      field += c;
    }
  }
  fields << field;
  return fields;
}

QString KvStudyReport::load(const QString& folder) {
  const QDir dir(folder);
  const QString report = dir.filePath(QStringLiteral("report.md"));
  if (!QFile::exists(report)) return tr("%1 holds no report.md: choose a folder written by 'attnlab-cli study live-cache'").arg(folder);
  tabs_->clear();
  setWindowTitle(tr("Study report: %1").arg(QDir::toNativeSeparators(dir.absolutePath())));
  auto* browser = new QTextBrowser(tabs_);
  browser->setOpenExternalLinks(true);
  browser->setSearchPaths({dir.absolutePath()});
  browser->setSource(QUrl::fromLocalFile(dir.absoluteFilePath(QStringLiteral("report.md"))), QTextDocument::MarkdownResource);
  tabs_->addTab(browser, tr("report.md"));
  for (const QString& name : dir.entryList({QStringLiteral("*.csv")}, QDir::Files, QDir::Name)) {
    QFile file(dir.filePath(name));
    if (!file.open(QIODevice::ReadOnly | QIODevice::Text)) return tr("cannot read %1").arg(file.fileName());
    QTextStream in(&file);
    auto* table = new QTableWidget(tabs_);
    const QStringList header = splitCsvLine(in.readLine());
    table->setColumnCount(header.size());
    table->setHorizontalHeaderLabels(header);
    while (!in.atEnd()) {
      const QString line = in.readLine();
      if (line.trimmed().isEmpty()) continue;
      const QStringList fields = splitCsvLine(line);
      const int row = table->rowCount();
      table->insertRow(row);
      for (int c = 0; c < fields.size() && c < header.size(); ++c) {
        auto* item = new QTableWidgetItem;
        bool number = false;
        const double value = fields[c].toDouble(&number);
        if (number) item->setData(Qt::DisplayRole, value);  // numeric sorting
        else item->setText(fields[c]);
        table->setItem(row, c, item);
      }
    }
    table->setSortingEnabled(true);
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table->resizeColumnsToContents();
    tabs_->addTab(table, name);
  }
  return {};
}

}  // namespace attnlab
