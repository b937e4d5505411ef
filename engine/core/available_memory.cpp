#include "core/available_memory.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>

namespace attnlab {

namespace {

std::optional<uint64_t> assumed;

uint64_t physicalMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || pageSize <= 0) return std::numeric_limits<uint64_t>::max();  // unknown: refuse nothing
  return uint64_t(pages) * uint64_t(pageSize);
}

}  // namespace

std::optional<uint64_t> memAvailableIn(const std::string& meminfo) {
  std::istringstream lines(meminfo);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string key, unit;
    uint64_t amount = 0;
    if (!(fields >> key >> amount) || key != "MemAvailable:") continue;
    fields >> unit;
    if (unit.empty() || unit == "B") return amount;
    if (unit == "kB") return amount * 1024;
  }
  return std::nullopt;
}

uint64_t availableMemoryBytes() {
  if (assumed) return *assumed;
  std::ifstream in("/proc/meminfo");
  std::stringstream text;
  text << in.rdbuf();
  if (const std::optional<uint64_t> available = memAvailableIn(text.str())) return *available;
  return physicalMemoryBytes();
}

AssumedAvailableMemory::AssumedAvailableMemory(uint64_t bytes) : previous_(assumed) { assumed = bytes; }

AssumedAvailableMemory::~AssumedAvailableMemory() { assumed = previous_; }

std::string memoryText(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int unit = 0;
  while (bytes >= 1024 && unit < 6) bytes /= 1024, ++unit;
  char text[64];
  std::snprintf(text, sizeof text, unit == 0 ? "%.0f %s" : "%.1f %s", bytes, units[unit]);
  return text;
}

}  // namespace attnlab
