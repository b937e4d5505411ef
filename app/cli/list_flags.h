#pragma once
// Values of the flags that take a comma-separated list. Each throws CliError naming the bad item.
#include <cstdint>
#include <string>
#include <vector>

namespace attnlab::cli {

// "a,,b" -> {"a", "b"}: the items, empty ones dropped.
std::vector<std::string> splitList(const std::string& text);
// --lengths "1,2,4,8": positive multiples of the training length, at most 64.
std::vector<double> parseMultiples(const std::string& text);
// --<flag> "3,1,4": token ids, each in [0, vocab).
std::vector<int> parseIdList(const std::string& flag, const std::string& text, int vocab);
// --seeds "1,2,3": whole numbers >= 0.
std::vector<uint64_t> parseSeedList(const std::string& text);
// --budgets "12.5%,25%": shares of the positions seen, as fractions.
std::vector<double> parseBudgetShares(const std::string& text);

}  // namespace attnlab::cli
