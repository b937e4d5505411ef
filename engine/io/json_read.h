#pragma once
// Reading optional members of the lab's own JSON files (comparison files, view states).
#include <nlohmann/json.hpp>
#include <string>

namespace attnlab {

// Reads the member `key` of `object`, when present, into `value`; returns "" or why its type is wrong.
template <class Json, class T>
std::string readOptional(const Json& object, const char* key, T& value) {
  const auto it = object.find(key);
  if (it == object.end()) return {};
  try {
    value = it->template get<T>();
  } catch (const nlohmann::json::exception&) {
    return std::string("\"") + key + "\" has the wrong type";
  }
  return {};
}

}  // namespace attnlab
