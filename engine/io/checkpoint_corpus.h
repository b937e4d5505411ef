#pragma once
// A text-file task's corpus travels with its checkpoint: saving copies the file into the folder as
// corpus.txt and stores that name, relative to the folder, so the folder can be moved or shared and
// still opens, trains on and tokenizes the same. Every corpus the text task accepts (at most 64 MiB)
// is copied. A checkpoint saved before this stores the file's absolute path, which still opens
// while the file is there.
#include <string>

#include "io/checkpoint.h"
#include "experiment/experiment_config.h"

namespace attnlab {

// Into the checkpoint being written at `folder`: copies the corpus of a "text" task (flushed to
// disk) and points `config.task.text_path` at the copy. Returns "" or a one-line reason.
std::string keepCorpus(const std::string& folder, ExperimentConfig& config);
// After reading config.json of the checkpoint at `folder`: a relative text_path names its copy.
void findKeptCorpus(const std::string& folder, ExperimentConfig& config);

// "Locate file...": for a checkpoint of an older version whose text file has moved, the path its
// config.json names when that file is missing ("" otherwise, or when it is not such a checkpoint).
std::string missingCorpus(const std::string& dir);
// loadCheckpoint with the text task reading `textFile` instead. A different text is refused as
// loading refuses any mismatch (its vocabulary must give the saved model.vocab). The next save
// keeps a copy of it in the folder.
std::string loadCheckpointOnText(const std::string& dir, const std::string& textFile, LoadedCheckpoint& out);

}  // namespace attnlab
