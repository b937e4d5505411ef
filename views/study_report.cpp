#include "study_report.h"

#include <QDesktopServices>
#include <QDialogButtonBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHeaderView>
#include <QMessageBox>
#include <QPushButton>
#include <QTabWidget>
#include <QTableWidget>
#include <QTextBrowser>
#include <QTextStream>
#include <QUrl>
#include <QVBoxLayout>

namespace attnlab {

StudyReport::StudyReport(QWidget* parent) : QDialog(parent), tabs_(new QTabWidget(this)) {
  setWindowTitle(tr("Study report"));
  resize(1100, 800);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(tabs_, 1);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
  back_ = buttons->addButton(tr("\u2190 Back"), QDialogButtonBox::ActionRole);
  back_->setToolTip(tr("The report shown before this one"));
  back_->setEnabled(false);
  connect(back_, &QPushButton::clicked, this, &StudyReport::back);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  layout->addWidget(buttons);
}

QStringList StudyReport::splitCsvLine(const QString& line) {
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

QString StudyReport::load(const QString& folder) {
  const QString path = QDir(folder).absolutePath();
  if (const QString why = display(path); !why.isEmpty()) {
    if (!history_.isEmpty()) display(history_.last());  // the report shown before stays
    return why;
  }
  history_ << path;
  back_->setEnabled(history_.size() > 1);
  return {};
}

void StudyReport::back() {
  if (history_.size() < 2) return;
  history_.removeLast();
  display(history_.last());
  back_->setEnabled(history_.size() > 1);
}

void StudyReport::follow(const QUrl& link) {
  const QString file = link.isRelative() ? QDir(folder()).absoluteFilePath(link.path()) : link.toLocalFile();
  if ((link.isRelative() || link.isLocalFile()) && QFileInfo(file).fileName() == QStringLiteral("report.md")) {
    if (const QString why = load(QFileInfo(file).absolutePath()); !why.isEmpty()) QMessageBox::warning(this, tr("Study report"), why);
    return;
  }
  QDesktopServices::openUrl(link.isRelative() ? QUrl::fromLocalFile(file) : link);
}

QString StudyReport::display(const QString& folder) {
  const QDir dir(folder);
  const QString report = dir.filePath(QStringLiteral("report.md"));
  if (!QFile::exists(report)) return tr("%1 holds no report.md: choose a folder written by 'attnlab-cli study NAME --out DIR'").arg(folder);
  // Read the CSVs before anything changes, so an unreadable one leaves the report shown as it was.
  QList<QPair<QString, QList<QStringList>>> tables;
  for (const QString& name : dir.entryList({QStringLiteral("*.csv")}, QDir::Files, QDir::Name)) {
    QFile file(dir.filePath(name));
    if (!file.open(QIODevice::ReadOnly | QIODevice::Text)) return tr("cannot read %1").arg(file.fileName());
    QTextStream in(&file);
    QList<QStringList> rows;
    while (!in.atEnd())
      if (const QString line = in.readLine(); !line.trimmed().isEmpty()) rows << splitCsvLine(line);
    tables.append({name, rows});
  }
  tabs_->clear();
  setWindowTitle(tr("Study report: %1").arg(QDir::toNativeSeparators(dir.absolutePath())));
  auto* browser = new QTextBrowser(tabs_);
  browser->setOpenLinks(false);  // follow() decides: another report opens here
  connect(browser, &QTextBrowser::anchorClicked, this, &StudyReport::follow);
  browser->setSearchPaths({dir.absolutePath()});
  browser->setSource(QUrl::fromLocalFile(report), QTextDocument::MarkdownResource);
  tabs_->addTab(browser, tr("report.md"));
  for (const auto& [name, rows] : tables) {
    auto* table = new QTableWidget(tabs_);
    const QStringList header = rows.value(0);
    table->setColumnCount(header.size());
    table->setHorizontalHeaderLabels(header);
    table->setRowCount(rows.size() > 0 ? rows.size() - 1 : 0);
    for (int r = 1; r < rows.size(); ++r)
      for (int c = 0; c < rows[r].size() && c < header.size(); ++c) {
        auto* item = new QTableWidgetItem;
        bool number = false;
        const double value = rows[r][c].toDouble(&number);
        if (number) item->setData(Qt::DisplayRole, value);  // numeric sorting
        else item->setText(rows[r][c]);
        table->setItem(r - 1, c, item);
      }
    table->setSortingEnabled(true);
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table->resizeColumnsToContents();
    tabs_->addTab(table, name);
  }
  return {};
}

}  // namespace attnlab
