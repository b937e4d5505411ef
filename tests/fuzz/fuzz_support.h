#pragma once
// Shared by the libFuzzer targets (one per reader of outside files): a private scratch folder, and
// writing the fuzzer's bytes where a reader that takes a path expects its file.
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace attnlab::fuzz {

// A folder of this process's own under /tmp, made on first use and removed when the process exits.
inline const std::filesystem::path& scratch() {
  static char name[] = "/tmp/attnlab-fuzz-XXXXXX";  // no destructor: still there when atexit runs
  static const std::filesystem::path dir = [] {
    if (!mkdtemp(name)) std::abort();
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(name, ec);
    });
    return std::filesystem::path(name);
  }();
  return dir;
}

inline std::string bytesOf(const uint8_t* data, size_t size) { return std::string(reinterpret_cast<const char*>(data), size); }

inline void writeFile(const std::filesystem::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) std::abort();  // the scratch folder itself failed: not a finding about the reader
}

}  // namespace attnlab::fuzz
