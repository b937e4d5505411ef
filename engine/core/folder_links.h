#pragma once
// Model and checkpoint folders come from elsewhere (downloads, other people): a symbolic link in
// one must not make the lab read a file outside it.
#include <string>

namespace attnlab {

// Returns "" when no entry of `dir` is a symbolic link resolving outside `dir`, else
// "<entry>: a symbolic link to <target>, outside the folder (refused)". A Hugging Face cache
// snapshot (models--ORG--NAME/snapshots/REV/) links each file into its repository's own blobs/
// folder: those links are allowed. A link that leads nowhere is left to the reader to report.
std::string checkLinksStayInFolder(const std::string& dir);

}  // namespace attnlab
