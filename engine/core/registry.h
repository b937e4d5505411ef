#pragma once
// A family of interchangeable parts (attention variants, positional encodings, tasks, ...).
// Each member lives in its own .cpp file and registers itself with one line:
//   ATTNLAB_REGISTER(AttentionRegistry, "softmax", "a = softmax(beta*s)", [] { return std::make_unique<Softmax>(); });
// The engine is linked as an OBJECT library so these static registrations are never dropped.
#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace attnlab {

template <class Base>
class Registry {
 public:
  using Factory = std::function<std::unique_ptr<Base>()>;
  struct Entry {
    std::string name;
    std::string summary;  // one line: the member's formula or rule
    Factory make;
  };

  static Registry& instance() {
    static Registry r;
    return r;
  }
  bool add(std::string name, std::string summary, Factory make) {
    entries_.push_back({std::move(name), std::move(summary), std::move(make)});
    std::sort(entries_.begin(), entries_.end(), [](const Entry& a, const Entry& b) { return a.name < b.name; });
    return true;
  }
  const Entry* find(const std::string& name) const {
    for (const auto& e : entries_)
      if (e.name == name) return &e;
    return nullptr;
  }
  std::unique_ptr<Base> create(const std::string& name) const {
    const Entry* e = find(name);
    return e ? e->make() : nullptr;
  }
  const std::vector<Entry>& entries() const { return entries_; }
  std::string names() const {
    std::string out;
    for (const auto& e : entries_) out += (out.empty() ? "" : ", ") + e.name;
    return out;
  }

 private:
  std::vector<Entry> entries_;
};

#define ATTNLAB_CONCAT_INNER(a, b) a##b
#define ATTNLAB_CONCAT(a, b) ATTNLAB_CONCAT_INNER(a, b)
#define ATTNLAB_REGISTER(RegistryType, name, summary, factory) \
  static const bool ATTNLAB_CONCAT(attnlab_registered_, __LINE__) = RegistryType::instance().add(name, summary, factory)

}  // namespace attnlab
