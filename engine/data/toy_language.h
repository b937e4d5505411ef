#pragma once
// The words of the default corpus ("toy_language"), by grammatical role. Public so that tests
// and documentation can check generated text against the grammar (see toy_language.cpp).
#include <string>
#include <vector>

namespace attnlab {

struct WordForms {
  std::string singular;
  std::string plural;
};

struct ToyLexicon {
  std::string period = ".";
  std::string relativePronoun = "that";
  std::string conjunction = "and";
  std::string article = "the";  // goes with either number
  std::vector<std::string> singularDeterminers;
  std::vector<std::string> pluralDeterminers;
  std::vector<std::string> adjectives;
  std::vector<WordForms> nouns;
  std::vector<WordForms> transitiveVerbs;
  std::vector<WordForms> intransitiveVerbs;
  std::vector<std::string> adverbs;
  std::vector<std::string> prepositions;
  std::vector<std::string> places;  // only in "preposition the place" at the end of a sentence
  std::vector<std::string> names;   // proper names, singular
};

const ToyLexicon& toyLexicon();

}  // namespace attnlab
