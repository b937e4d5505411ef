#pragma once
// One colour scale for several runs side by side (the comparison's heatmaps): while shared, every
// run's map is coloured up to the largest weight any run's selected head has, so equal colours
// mean equal weights across panes; per run, each map is coloured up to its own largest weight.
#include <QObject>
#include <vector>

namespace attnlab {

class HeadSelection;

class SharedColourScale : public QObject {
  Q_OBJECT
 public:
  using QObject::QObject;

  void add(const HeadSelection* run);
  bool isShared() const { return shared_; }
  void setShared(bool shared);
  // The weight the top of the ramp stands for in `run`'s map.
  double top(const HeadSelection* run) const;

 signals:
  void changed();  // a top may have moved: a map, a selection or the sharing changed

 private:
  std::vector<const HeadSelection*> runs_;
  bool shared_ = true;
};

}  // namespace attnlab
