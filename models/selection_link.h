#pragma once
// One layer/head selection shared by several runs' HeadSelections (the comparison's runs): a
// selection made in any of them (a click in its model view, say) is made in all, and so is a
// chosen query. A run that lacks
// the selected head shows the nearest one it has (clamped) and says so through note(); its
// fallback never moves the others. A run whose map appears or changes shape takes the shared
// selection again.
#include <QObject>
#include <QString>
#include <vector>

namespace attnlab {

class HeadSelection;

class SelectionLink : public QObject {
  Q_OBJECT
 public:
  using QObject::QObject;

  void add(HeadSelection* selection);
  void select(int layer, int head);  // selects in every map (clamped where missing)
  int layer() const { return layer_; }
  int head() const { return head_; }
  // The most layers and heads any linked map has (what a shared picker offers).
  int maxLayers() const;
  int maxHeads(int layer) const;
  // "" when `run` shows the shared selection, else why not (e.g. "layer 3 does not exist here").
  QString note(const HeadSelection* run) const;

 signals:
  void selectionChanged(int layer, int head);
  void shapeChanged();  // some map's layer or head count changed

 private:
  struct Linked {
    HeadSelection* selection;
    bool reshaped;  // its shape changed since it last took the shared selection
  };
  void followMap(Linked& linked);
  void apply(HeadSelection* selection);
  void shareQuery(const HeadSelection* from);

  std::vector<Linked> maps_;
  int layer_ = 0, head_ = 0;
  bool applying_ = false;
};

}  // namespace attnlab
