// Training history as CSV: one row per TrainPoint, per-layer vectors as extra columns
// (grad_norm_L0.., entropy_L0.., max_score_L0.., then the diagnostics probe's map_entropy_L0..,
// previous_token_L0.., induction_L0.., sink_L0..), then, in a run where QK-guard switched a layer,
// qk_guard_switch: the layers switched after that step, separated by ';'. NaN is an empty cell;
// numbers use the shortest text that reads back to the same double.
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <limits>
#include <string_view>

#include "io/checkpoint.h"
#include "core/files.h"

namespace attnlab {

namespace {

constexpr const char* kFixedColumns[] = {"step", "loss", "val_loss", "accuracy", "lr", "grad_norm", "tokens_per_second", "seconds"};
constexpr size_t kFixedCount = std::size(kFixedColumns);
constexpr size_t kMaxLayers = 64;  // validate() allows at most 64 layers
constexpr const char* kGuardColumn = "qk_guard_switch";

std::string layerList(const std::vector<int>& layers) {
  std::string out;
  for (int l : layers) out += (out.empty() ? "" : ";") + std::to_string(l);
  return out;
}

// "0;2" -> {0, 2}; false for anything but layer numbers below `layers`.
bool parseLayerList(std::string_view cell, std::vector<int>& out, size_t layers) {
  out.clear();
  while (!cell.empty()) {
    const size_t semicolon = cell.find(';');
    const std::string_view item = cell.substr(0, semicolon);
    int layer = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), layer);
    if (ec != std::errc() || end != item.data() + item.size() || layer < 0 || layer >= static_cast<int>(layers)) return false;
    out.push_back(layer);
    cell.remove_prefix(semicolon == std::string_view::npos ? cell.size() : semicolon + 1);
  }
  return true;
}


void appendNumber(std::string& out, double v) {
  if (std::isnan(v)) return;
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, end);
}

std::vector<std::string_view> splitCells(std::string_view line) {
  std::vector<std::string_view> cells;
  while (true) {
    const size_t comma = line.find(',');
    cells.push_back(line.substr(0, comma));
    if (comma == std::string_view::npos) return cells;
    line.remove_prefix(comma + 1);
  }
}

// The per-layer column groups, in file order: "<prefix><layer>" for layers 0, 1, ...
constexpr const char* kGroupPrefixes[] = {"grad_norm_L",      "entropy_L",   "max_score_L", "map_entropy_L",
                                          "previous_token_L", "induction_L", "sink_L"};
constexpr size_t kMaxScoreGroup = 2;
constexpr size_t kGroupCount = std::size(kGroupPrefixes);

// Group `group`'s values in a point (Point: TrainPoint or const TrainPoint).
template <class Point>
auto& groupValues(Point& p, size_t group) {
  switch (group) {
    case 0: return p.layer_grad_norm;
    case 1: return p.layer_entropy;
    case 2: return p.layer_max_score;
    case 3: return p.layer_diagnostics.entropy;
    case 4: return p.layer_diagnostics.previous_token;
    case 5: return p.layer_diagnostics.induction;
    default: return p.layer_diagnostics.sink;
  }
}
using GroupSizes = std::array<size_t, kGroupCount>;

// Reads the per-layer column groups and the QK-guard column from the header (any may be absent:
// older files have only the first two groups); returns "" or the complaint.
std::string parseHeader(const std::vector<std::string_view>& cells, GroupSizes& layers, bool& guardColumn) {
  for (size_t i = 0; i < kFixedCount; ++i)
    if (i >= cells.size() || cells[i] != kFixedColumns[i])
      return std::string("column ") + std::to_string(i + 1) + " should be \"" + kFixedColumns[i] + "\"";
  size_t i = kFixedCount;
  layers.fill(0);
  for (size_t g = 0; g < kGroupCount; ++g) {
    while (i < cells.size() && cells[i] == kGroupPrefixes[g] + std::to_string(layers[g])) ++i, ++layers[g];
    if (layers[g] > kMaxLayers) return "more per-layer columns than the " + std::to_string(kMaxLayers) + " layers a model can have";
  }
  guardColumn = i < cells.size() && cells[i] == kGuardColumn;
  i += guardColumn;
  if (i < cells.size())
    return "unexpected column \"" + std::string(cells[i]) +
           "\" (expected the per-layer columns grad_norm_L0.., entropy_L0.., max_score_L0.., map_entropy_L0.., previous_token_L0.., "
           "induction_L0.., sink_L0.., then " + kGuardColumn + ")";
  return {};
}

bool parseCell(std::string_view cell, double& out) {
  if (cell.empty()) {
    out = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  const auto [end, ec] = std::from_chars(cell.data(), cell.data() + cell.size(), out);
  return ec == std::errc() && end == cell.data() + cell.size();
}

// A row whose cells of one group are all empty had no per-layer values at that step.
void dropIfAllNaN(std::vector<double>& values) {
  if (std::all_of(values.begin(), values.end(), [](double v) { return std::isnan(v); })) values.clear();
}

}  // namespace

std::string writeHistoryCsv(const std::string& path, const std::vector<TrainPoint>& history) {
  GroupSizes layers{};
  bool guardColumn = false;
  for (const TrainPoint& p : history) {
    for (size_t g = 0; g < kGroupCount; ++g) layers[g] = std::max(layers[g], groupValues(p, g).size());
    guardColumn = guardColumn || !p.qk_guard_switched.empty();
  }
  std::string text;
  for (size_t i = 0; i < kFixedCount; ++i) text += (i ? "," : "") + std::string(kFixedColumns[i]);
  for (size_t g = 0; g < kGroupCount; ++g)
    for (size_t l = 0; l < layers[g]; ++l) text.append(",").append(kGroupPrefixes[g]).append(std::to_string(l));
  if (guardColumn) text += std::string(",") + kGuardColumn;
  text += '\n';

  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const TrainPoint& p : history) {
    text += std::to_string(p.step);
    for (double v : {p.loss, p.val_loss, p.accuracy, p.lr, p.grad_norm, p.tokens_per_second, p.seconds}) {
      text += ',';
      appendNumber(text, v);
    }
    for (size_t g = 0; g < kGroupCount; ++g) {
      const std::vector<double>& values = groupValues(p, g);
      for (size_t l = 0; l < layers[g]; ++l) {
        text += ',';
        appendNumber(text, l < values.size() ? values[l] : nan);
      }
    }
    if (guardColumn) text += "," + layerList(p.qk_guard_switched);
    text += '\n';
  }
  return writeFileAtomic(path, text);
}

std::string readHistoryCsv(const std::string& path, std::vector<TrainPoint>& history) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {  // a checkpoint saved before any step has no history
    history.clear();
    return {};
  }
  std::string text;
  if (std::string why = readWholeFile(path, text); !why.empty()) return why;

  std::vector<TrainPoint> parsed;
  GroupSizes layers{};
  bool guardColumn = false;
  std::vector<std::string> columns;  // from the header row
  size_t lineNumber = 0;
  std::string_view rest = text;
  while (!rest.empty()) {
    const size_t newline = rest.find('\n');
    std::string_view line = rest.substr(0, newline);
    rest.remove_prefix(newline == std::string_view::npos ? rest.size() : newline + 1);
    ++lineNumber;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    const std::string where = path + ": line " + std::to_string(lineNumber) + ": ";

    const std::vector<std::string_view> cells = splitCells(line);
    if (columns.empty()) {
      if (std::string why = parseHeader(cells, layers, guardColumn); !why.empty()) return where + why;
      columns.assign(cells.begin(), cells.end());
      continue;
    }
    if (cells.size() != columns.size())
      return where + "expected " + std::to_string(columns.size()) + " cells, got " + std::to_string(cells.size());

    TrainPoint p;
    const auto [end, stepError] = std::from_chars(cells[0].data(), cells[0].data() + cells[0].size(), p.step);
    if (stepError != std::errc() || end != cells[0].data() + cells[0].size())
      return where + "step \"" + std::string(cells[0]) + "\" is not a whole number";
    const int previous = parsed.empty() ? 0 : parsed.back().step;
    if (p.step <= previous)
      return where + "step " + std::to_string(p.step) + " does not follow step " + std::to_string(previous) +
             " (steps count up from 1)";
    double* fixed[] = {&p.loss, &p.val_loss, &p.accuracy, &p.lr, &p.grad_norm, &p.tokens_per_second, &p.seconds};
    std::vector<double*> targets(fixed, fixed + std::size(fixed));
    for (size_t g = 0; g < kGroupCount; ++g) {
      std::vector<double>& values = groupValues(p, g);
      values.resize(layers[g]);
      for (double& v : values) targets.push_back(&v);
    }
    const size_t numbers = cells.size() - guardColumn;
    for (size_t c = 1; c < numbers; ++c)
      if (!parseCell(cells[c], *targets[c - 1])) return where + columns[c] + " \"" + std::string(cells[c]) + "\" is not a number";
    if (guardColumn && !parseLayerList(cells.back(), p.qk_guard_switched, layers[kMaxScoreGroup]))
      return where + kGuardColumn + " \"" + std::string(cells.back()) + "\" is not a list of layers with a max_score column, like 0;2";
    for (size_t g = 0; g < kGroupCount; ++g) dropIfAllNaN(groupValues(p, g));
    parsed.push_back(std::move(p));
  }
  if (columns.empty()) return path + ": line 1: missing the header row";
  history = std::move(parsed);
  return {};
}

}  // namespace attnlab
