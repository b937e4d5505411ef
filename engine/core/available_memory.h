#pragma once
// How much memory this machine can still give: the figure every estimate is checked against before
// anything large is allocated (experiments, checkpoints, Hugging Face folders).
#include <cstdint>
#include <optional>
#include <string>

namespace attnlab {

// MemAvailable of a /proc/meminfo text in bytes (the kernel's estimate of what can be allocated
// without swapping), or nothing when the text has no such line.
std::optional<uint64_t> memAvailableIn(const std::string& meminfo);

// MemAvailable from /proc/meminfo; where the kernel does not give it, the physical memory.
uint64_t availableMemoryBytes();

// While one lives, availableMemoryBytes() answers `bytes`: a refusal can then be tested with a
// configuration a thousand times too large for a known figure, on any machine.
class AssumedAvailableMemory {
 public:
  explicit AssumedAvailableMemory(uint64_t bytes);
  ~AssumedAvailableMemory();
  AssumedAvailableMemory(const AssumedAvailableMemory&) = delete;
  AssumedAvailableMemory& operator=(const AssumedAvailableMemory&) = delete;

 private:
  std::optional<uint64_t> previous_;
};

// "21.4 GiB": bytes in the largest binary unit below 1024 of it, one decimal.
std::string memoryText(double bytes);

}  // namespace attnlab
