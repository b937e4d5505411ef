#pragma once
// File > Open Model: the models found in the local Hugging Face cache (hf/hf_cache.h), with name,
// architecture, size and parameters, beside a folder picker for any other model folder.
#include <QDialog>
#include <QString>

class QLabel;
class QTableWidget;

namespace attnlab {

class OpenModelDialog : public QDialog {
  Q_OBJECT
 public:
  // `cacheRoot` is scanned (hf::hfCacheRoot() in the app).
  explicit OpenModelDialog(const QString& cacheRoot, QWidget* parent = nullptr);
  QString chosenFolder() const { return chosen_; }
  QTableWidget* table() const { return table_; }  // one row per cached model

 private:
  void chooseRow(int row);
  void browse();

  QTableWidget* table_;
  QLabel* problem_;
  QString chosen_;
};

}  // namespace attnlab
