#pragma once
// One sub-command of attnlab-cli: its flags (which also drive its --help) and what it runs.
// Each command lives in its own file, cmd_<name>.cpp.
#include <functional>
#include <string>
#include <vector>

#include "args.h"

namespace attnlab::cli {

struct Command {
  std::string name;
  std::string synopsis;  // the usage line after "attnlab-cli <name> "
  std::string summary;   // one line, shown in the overview
  std::vector<FlagSpec> flags;
  std::string notes;                    // extra paragraphs for --help; may be empty
  std::function<int(const Args&)> run;  // returns the exit code
  // When set, the first argument must name one ("study live-cache"); run() reads it as --subcommand.
  std::vector<std::string> subcommands = {};
};

Command listCommand();
Command trainCommand();
Command evalCommand();
Command traceCommand();
Command generateCommand();
Command benchCommand();
Command analyzeCommand();
Command studyCommand();
Command modelsCommand();
Command exportHfCommand();
Command tokenizeCommand();
Command hooksCommand();
Command interpretCommand();
Command exportCommand();
Command dataCommand();

// "Usage: attnlab-cli <name> <synopsis>", the summary, each flag with its help, then the notes.
std::string helpText(const Command& command);

}  // namespace attnlab::cli
