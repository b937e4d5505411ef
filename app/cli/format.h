#pragma once
// Numbers as the CLI prints them: JSON values (NaN and infinities become null) and short text.
#include <nlohmann/json.hpp>
#include <string>

namespace attnlab::cli {

using Json = nlohmann::ordered_json;  // keeps keys in the order written

Json numberOrNull(double value);
// The shortest decimal that reads back as the same float (0.1f is written 0.1, not
// 0.10000000149011612), or null when not finite.
Json shortFloat(float value);

std::string fixed(double value, int decimals);  // "n/a" when not finite
std::string percent(double fraction);           // "97.1%", "n/a" when not finite
std::string compactCount(double value);         // 8123 -> "8.1k", 2.5e6 -> "2.5M"
std::string duration(double seconds);           // "42s", "3m05s", "1h02m"

}  // namespace attnlab::cli
