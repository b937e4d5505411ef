#pragma once
// The vocabulary an opened Hugging Face model is read and labelled with: its folder's tokenizer
// (tokenizer.json, or vocab.json + merges.txt; labels are the display forms, a leading space as ␣)
// when one loads, else the ids themselves.
#include <string>
#include <vector>

#include "tokenizer/vocabulary.h"

namespace attnlab::hf {

// `vocab` is the model's embedding rows; the vocabulary has at least that many labels (rows the
// tokenizer has no token for are labelled ""). `problem` is set to why the tokenizer did not load
// ("" when it did); the vocabulary then labels ids "0", "1", ... and has no tokenizer.
Vocabulary hfVocabulary(const std::string& dir, int vocab, std::string& problem);

// `text` through the vocabulary's tokenizer with the specials its files ask for (BOS), each id
// checked against the model's `vocab` rows. Returns "" or a one-line reason.
std::string encodeForModel(const Vocabulary& vocabulary, const std::string& text, int vocab, std::vector<int>& ids);

}  // namespace attnlab::hf
