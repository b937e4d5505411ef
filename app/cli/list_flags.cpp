#include "list_flags.h"

#include <sstream>

#include "cli_error.h"
#include "kv/eviction_policy.h"

namespace attnlab::cli {

std::vector<std::string> splitList(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

std::vector<double> parseMultiples(const std::string& text) {
  std::vector<double> out;
  std::stringstream items(text);
  for (std::string item; std::getline(items, item, ',');) {
    size_t used = 0;
    double m = 0;
    try {
      m = std::stod(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size() || !(m > 0) || m > 64)
      throw CliError("--lengths: '" + item + "' is not a multiple of the training length in (0, 64] (example: --lengths 1,2,4,8)", kExitUsage);
    out.push_back(m);
  }
  if (out.empty()) throw CliError("--lengths needs at least one multiple (example: --lengths 1,2,4,8)", kExitUsage);
  return out;
}

std::vector<int> parseIdList(const std::string& flag, const std::string& text, int vocab) {
  std::vector<int> ids;
  std::stringstream list(text);
  for (std::string item; std::getline(list, item, ',');) {
    size_t used = 0;
    long long id = -1;
    try {
      id = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size()) throw CliError("--" + flag + ": '" + item + "' is not a token id (give ids like 3,1,4)");
    if (id < 0 || id >= vocab) throw CliError("--" + flag + ": token id " + item + " is outside the vocabulary of " + std::to_string(vocab));
    ids.push_back(static_cast<int>(id));
  }
  if (ids.empty()) throw CliError("--" + flag + " holds no token id");
  return ids;
}

std::vector<uint64_t> parseSeedList(const std::string& text) {
  std::vector<uint64_t> seeds;
  for (const std::string& item : splitList(text)) {
    size_t used = 0;
    unsigned long long seed = 0;
    try {
      seed = std::stoull(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || item[0] == '-') throw CliError("--seeds '" + text + "' is not a list of whole numbers such as 1,2,3");
    seeds.push_back(seed);
  }
  return seeds;
}

std::vector<double> parseBudgetShares(const std::string& text) {
  std::vector<double> shares;
  for (const std::string& item : splitList(text)) {
    Budget b;
    if (std::string why = parseBudget(item, "head", b); !why.empty() || b.kind != Budget::Kind::ratio)
      throw CliError("--budgets takes shares of the positions seen, such as 12.5%,25%,50% ('" + item + "')");
    shares.push_back(b.value);
  }
  return shares;
}

}  // namespace attnlab::cli
