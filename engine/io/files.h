#pragma once
// Small POSIX file helpers shared by the checkpoint writers and readers.
// (writeFileAtomic itself is public, in io/checkpoint.h.)
#include <string>

namespace attnlab {

// Reads the whole file into `bytes`. Returns "" or "<path>: cannot read (<reason>)".
std::string readWholeFile(const std::string& path, std::string& bytes);
// A short random tag for temporary names, so concurrent saves never pick the same name.
std::string randomTag();
// Makes a folder's entries (new files, renames) durable. Returns "" or "<dir>: <reason>".
std::string syncFolder(const std::string& dir);
// The reason for the last failed system call, e.g. "No space left on device".
std::string lastSystemError();

}  // namespace attnlab
