// Training history as CSV: one row per TrainPoint, per-layer vectors as extra columns
// (grad_norm_L0.., entropy_L0.., then the diagnostics probe's map_entropy_L0.., previous_token_L0..,
// induction_L0.., sink_L0..). NaN is an empty cell; numbers use the shortest text that
// reads back to the same double.
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <limits>
#include <string_view>

#include "io/checkpoint.h"
#include "io/files.h"

namespace attnlab {

namespace {

constexpr const char* kFixedColumns[] = {"step", "loss", "val_loss", "accuracy", "lr", "grad_norm", "tokens_per_second", "seconds"};
constexpr size_t kFixedCount = std::size(kFixedColumns);
constexpr size_t kMaxLayers = 64;  // validate() allows at most 64 layers

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
constexpr const char* kGroupPrefixes[] = {"grad_norm_L", "entropy_L", "map_entropy_L", "previous_token_L", "induction_L", "sink_L"};
constexpr size_t kGroupCount = std::size(kGroupPrefixes);

// Group `group`'s values in a point (Point: TrainPoint or const TrainPoint).
template <class Point>
auto& groupValues(Point& p, size_t group) {
  switch (group) {
    case 0: return p.layer_grad_norm;
    case 1: return p.layer_entropy;
    case 2: return p.layer_diagnostics.entropy;
    case 3: return p.layer_diagnostics.previous_token;
    case 4: return p.layer_diagnostics.induction;
    default: return p.layer_diagnostics.sink;
  }
}
using GroupSizes = std::array<size_t, kGroupCount>;

// Reads the per-layer column groups from the header (any group may be absent: older files have
// only the first two); returns "" or the complaint.
std::string parseHeader(const std::vector<std::string_view>& cells, GroupSizes& layers) {
  for (size_t i = 0; i < kFixedCount; ++i)
    if (i >= cells.size() || cells[i] != kFixedColumns[i])
      return std::string("column ") + std::to_string(i + 1) + " should be \"" + kFixedColumns[i] + "\"";
  size_t i = kFixedCount;
  layers.fill(0);
  for (size_t g = 0; g < kGroupCount; ++g) {
    while (i < cells.size() && cells[i] == kGroupPrefixes[g] + std::to_string(layers[g])) ++i, ++layers[g];
    if (layers[g] > kMaxLayers) return "more per-layer columns than the " + std::to_string(kMaxLayers) + " layers a model can have";
  }
  if (i < cells.size()) return "unexpected column \"" + std::string(cells[i]) + "\" (expected the per-layer columns grad_norm_L0.., entropy_L0.., map_entropy_L0.., previous_token_L0.., induction_L0.., sink_L0..)";
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
  for (const TrainPoint& p : history)
    for (size_t g = 0; g < kGroupCount; ++g) layers[g] = std::max(layers[g], groupValues(p, g).size());
  std::string text;
  for (size_t i = 0; i < kFixedCount; ++i) text += (i ? "," : "") + std::string(kFixedColumns[i]);
  for (size_t g = 0; g < kGroupCount; ++g)
    for (size_t l = 0; l < layers[g]; ++l) text.append(",").append(kGroupPrefixes[g]).append(std::to_string(l));
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
      if (std::string why = parseHeader(cells, layers); !why.empty()) return where + why;
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
    for (size_t c = 1; c < cells.size(); ++c)
      if (!parseCell(cells[c], *targets[c - 1])) return where + columns[c] + " \"" + std::string(cells[c]) + "\" is not a number";
    for (size_t g = 0; g < kGroupCount; ++g) dropIfAllNaN(groupValues(p, g));
    parsed.push_back(std::move(p));
  }
  if (columns.empty()) return path + ": line 1: missing the header row";
  history = std::move(parsed);
  return {};
}

}  // namespace attnlab
