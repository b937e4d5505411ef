#pragma once
// The views as a family: one row per kind of view (view_kinds.cpp). The main window's tabs and
// View menu, the comparison window's Show picker, --view, --export and the user guide's list are
// all read from this table, so a new view is its own files plus one row there.
#include <QString>
#include <QStringList>
#include <functional>
#include <type_traits>
#include <vector>

#include "view_context.h"
#include "view_export.h"

class QWidget;

namespace attnlab {

// One made view: its widget, its export (null when it has none) and what blocks until its
// background computation for the latest trace is shown (empty when it computes nothing).
struct ViewInstance {
  QWidget* widget = nullptr;
  ExportableView* exportable = nullptr;
  std::function<void()> settle;
};

struct ViewKind {
  using Factory = std::function<ViewInstance(const ViewContext& context, QWidget* parent)>;
  QString id;            // --view, --export file names, comparison files: "attention"
  QString title;         // the tab
  QString menuText;      // the View menu (with its & mnemonic) and the comparison's Show picker
  QString toolTip;       // the tab's and the menu entry's
  QString guideSection;  // the heading of its section in resources/guide/guide.md
  bool showsProbe;       // the probe editor and the layer/head selection sit above it
  Factory make;
};

// In tab order; the View menu's Ctrl+1.. shortcuts follow it.
const std::vector<ViewKind>& viewKinds();
QStringList viewKindIds();
int viewKindIndex(const QString& id);  // -1 when unknown

// The factory of a view built as View(context, parent); `settle` names its blocking wait, if any.
template <class View>
ViewKind::Factory viewFactory(void (View::*settle)() = nullptr) {
  return [settle](const ViewContext& context, QWidget* parent) {
    auto* view = new View(context, parent);
    ViewInstance made{view, nullptr, {}};
    if constexpr (std::is_base_of_v<ExportableView, View>) made.exportable = view;
    if (settle) made.settle = [view, settle] { (view->*settle)(); };
    return made;
  };
}

}  // namespace attnlab
