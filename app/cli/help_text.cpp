#include <algorithm>

#include "command.h"

namespace attnlab::cli {

std::string helpText(const Command& command) {
  std::vector<std::pair<std::string, std::string>> rows;
  for (const FlagSpec& flag : command.flags)
    rows.emplace_back("--" + flag.name + (flag.valueName.empty() ? "" : " " + flag.valueName), flag.help);
  rows.emplace_back("--help", "show this help");
  size_t width = 0;
  for (const auto& row : rows) width = std::max(width, row.first.size());

  std::string out = "Usage: attnlab-cli " + command.name + " " + command.synopsis + "\n\n" + command.summary + "\n\n";
  for (const auto& [flag, help] : rows) out += "  " + flag + std::string(width - flag.size() + 2, ' ') + help + "\n";
  if (!command.notes.empty()) out += "\n" + command.notes + "\n";
  return out;
}

}  // namespace attnlab::cli
