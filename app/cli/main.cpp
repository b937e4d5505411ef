// attnlab-cli: the headless front end of the engine. Dispatches to one command per file
// (cmd_*.cpp); every failure ends as one line on stderr and a non-zero exit, never a crash.
#include <algorithm>
#include <iostream>
#include <new>

#include "cli_error.h"
#include "core/heap_reuse.h"
#include "core/openmp_wait.h"
#include "command.h"
#include "train/trainer.h"

namespace attnlab::cli {
namespace {

std::vector<Command> allCommands() {
  return {listCommand(), trainCommand(), evalCommand(), traceCommand(), generateCommand(), benchCommand(),
          analyzeCommand(), studyCommand(), modelsCommand(), exportHfCommand(), tokenizeCommand(),
          hooksCommand(), interpretCommand(), exportCommand(), dataCommand()};
}

const Command* findCommand(const std::vector<Command>& commands, const std::string& name) {
  for (const auto& c : commands)
    if (c.name == name) return &c;
  return nullptr;
}

std::string overview(const std::vector<Command>& commands) {
  std::string out =
      "attnlab-cli: train and inspect small attention models without the desktop app.\n\n"
      "Usage: attnlab-cli <command> [flags]\n\nCommands:\n";
  for (const auto& c : commands) out += "  " + c.name + std::string(10 - c.name.size(), ' ') + c.summary + "\n";
  out +=
      "  help      this overview; 'attnlab-cli help <command>' or '<command> --help' for one command\n\n"
      "Exit codes: 0 success, 1 other failure (e.g. a checkpoint could not be written),\n"
      "2 bad input, 3 training diverged, 130 training stopped by Ctrl-C (after saving).\n"
      "Every failure prints one line on stderr: \"attnlab-cli: <reason>\".\n";
  return out;
}

bool isHelpFlag(const std::string& arg) { return arg == "--help" || arg == "-h"; }

int run(const std::vector<std::string>& arguments) {
  const std::vector<Command> commands = allCommands();
  if (arguments.empty()) throw CliError("no command given (try 'attnlab-cli help')");
  const std::string& name = arguments[0];
  if (name == "help" || isHelpFlag(name)) {
    if (arguments.size() == 1) {
      std::cout << overview(commands);
      return 0;
    }
    const Command* command = findCommand(commands, arguments[1]);
    if (!command) throw CliError("unknown command '" + arguments[1] + "' (try 'attnlab-cli help')");
    std::cout << helpText(*command);
    return 0;
  }
  const Command* command = findCommand(commands, name);
  if (!command) throw CliError("unknown command '" + name + "' (try 'attnlab-cli help')");
  std::vector<std::string> rest(arguments.begin() + 1, arguments.end());
  if (std::any_of(rest.begin(), rest.end(), isHelpFlag)) {
    std::cout << helpText(*command);
    return 0;
  }
  if (!command->subcommands.empty()) {
    const auto& subs = command->subcommands;
    if (rest.empty() || std::find(subs.begin(), subs.end(), rest[0]) == subs.end()) {
      std::string known;
      for (const auto& s : subs) known += (known.empty() ? "" : ", ") + s;
      throw CliError("'" + name + "' needs a subcommand first (known: " + known + ")");
    }
    rest[0] = "--subcommand=" + rest[0];
  }
  return command->run(Args(rest, command->flags));
}

// Engine messages are one line by contract; this keeps the promise even if one is not.
void printError(std::string what) {
  std::replace(what.begin(), what.end(), '\n', ' ');
  std::cout.flush();
  std::cerr << "attnlab-cli: " << what << std::endl;
}

}  // namespace
}  // namespace attnlab::cli

int main(int argc, char** argv) {
  using namespace attnlab::cli;
  attnlab::restartWithPassiveOpenMpWait(argv);
  attnlab::keepFreedBlocksForReuse();
  try {
    return run(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const CliError& e) {
    printError(e.what());
    return e.code;
  } catch (const attnlab::ConfigError& e) {
    printError(e.what());
    return kExitUsage;
  } catch (const std::bad_alloc&) {
    printError("out of memory (try a smaller model, batch or context)");
    return 1;
  } catch (const std::exception& e) {
    printError(std::string("internal error: ") + e.what());
    return 1;
  }
}
