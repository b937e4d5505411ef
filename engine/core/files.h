#pragma once
// Small POSIX file helpers shared by every writer and reader of files.
#include <string>

namespace attnlab {

// The largest file readWholeFile reads: the lab's configs, histories and comparison files are far
// smaller, and a larger one (or a device that never ends) must not be read into memory.
constexpr unsigned long long kMaxWholeFileBytes = 1ull << 30;
// Reads the whole file into `bytes`. Returns "" or "<path>: <reason>" (unreadable, not a regular
// file, or larger than kMaxWholeFileBytes: refused before anything is read).
std::string readWholeFile(const std::string& path, std::string& bytes);
// A short random tag for temporary names, so concurrent saves never pick the same name.
std::string randomTag();
// Makes a folder's entries (new files, renames) durable. Returns "" or "<dir>: <reason>".
std::string syncFolder(const std::string& dir);
// Writes `bytes` to `path` via a temporary file in the same folder, flushed, and a rename.
std::string writeFileAtomic(const std::string& path, const std::string& bytes);
// The reason for the last failed system call, e.g. "No space left on device".
std::string lastSystemError();

}  // namespace attnlab
