#include "daemon/cli.h"

#include <functional>
#include <iostream>
#include <optional>

#include "daemon/commands.h"

namespace tailforge {

namespace {

struct FlagSpec {
  std::string name;
  bool takes_value;
  std::string help;
};

struct CommandSpec {
  std::string name;
  std::string arguments;  // positional arguments, as shown in the usage
  std::string summary;
  std::vector<FlagSpec> flags;
  int max_positionals;
  std::function<int(const CommandLine&)> run;
};

const FlagSpec kDb{"--db", true, "SQLite database file (default: store.path, ./tailforge.db)"};
const FlagSpec kConfig{"--config", true, "JSON configuration overriding config/default.json"};
const FlagSpec kLogLevel{"--log-level", true, "trace, debug, info, warn, error or off"};
const FlagSpec kJson{"--json", false, "print JSON instead of a table"};

int command_version(const CommandLine&) {
  std::cout << "tailforge " << TAILFORGE_VERSION << "\n";
  return 0;
}

const std::vector<CommandSpec>& commands();

void print_usage(std::ostream& out) {
  out << "usage: tailforge <command> [options]\n\ncommands:\n";
  for (const CommandSpec& command : commands()) {
    std::string head = command.name + (command.arguments.empty() ? "" : " " + command.arguments);
    out << "  " << head << std::string(head.size() < 22 ? 22 - head.size() : 1, ' ') << command.summary << "\n";
  }
  out << "\nRun 'tailforge <command> --help' for a command's options.\n";
}

void print_command_help(const CommandSpec& command, std::ostream& out) {
  out << "usage: tailforge " << command.name << (command.arguments.empty() ? "" : " " + command.arguments)
      << " [options]\n\n"
      << command.summary << "\n\noptions:\n";
  for (const FlagSpec& flag : command.flags) {
    std::string head = flag.name + (flag.takes_value ? " VALUE" : "");
    out << "  " << head << std::string(head.size() < 22 ? 22 - head.size() : 1, ' ') << flag.help << "\n";
  }
}

const std::vector<CommandSpec>& commands() {
  static const std::vector<CommandSpec> table = {
      {"daemon", "", "run the generate -> compile -> test -> categorize -> synthesize loop",
       {kDb, kConfig, kLogLevel, {"--cycles", true, "stop after N cycles (0: run until stopped)"},
        {"--listen", true, "HTTP API address, e.g. 127.0.0.1:8470"}},
       0, command_daemon},
      {"status", "", "what the store holds: samples, verified pairs, failures, jobs, cycles",
       {kDb, kConfig, kLogLevel, kJson}, 0, command_status},
      {"version", "", "print the version", {}, 0, command_version},
  };
  return table;
}

int usage_error(const std::string& message) {
  std::cerr << "tailforge: " << message << "\n";
  print_usage(std::cerr);
  return 2;
}

}  // namespace

int run_cli(int argc, char** argv) {
  std::vector<std::string> words(argv + 1, argv + argc);
  if (words.empty()) return usage_error("no command given");
  if (words[0] == "--help" || words[0] == "-h" || words[0] == "help") {
    print_usage(std::cout);
    return 0;
  }
  if (words[0] == "--version") words[0] = "version";

  const CommandSpec* spec = nullptr;
  for (const CommandSpec& command : commands()) {
    if (command.name == words[0]) spec = &command;
  }
  if (!spec) return usage_error("unknown command '" + words[0] + "'");

  CommandLine line;
  line.command = spec->name;
  for (size_t i = 1; i < words.size(); ++i) {
    const std::string& word = words[i];
    if (word == "--help" || word == "-h") {
      print_command_help(*spec, std::cout);
      return 0;
    }
    if (word.rfind("--", 0) != 0 || word == "--") {
      line.positionals.push_back(word);
      continue;
    }
    std::string name = word;
    std::optional<std::string> inline_value;
    if (size_t eq = word.find('='); eq != std::string::npos) {
      name = word.substr(0, eq);
      inline_value = word.substr(eq + 1);
    }
    const FlagSpec* flag = nullptr;
    for (const FlagSpec& candidate : spec->flags) {
      if (candidate.name == name) flag = &candidate;
    }
    if (!flag) return usage_error("unknown option '" + name + "' for '" + spec->name + "'");
    if (flag->takes_value) {
      if (inline_value) {
        line.options[name] = *inline_value;
      } else if (i + 1 < words.size()) {
        line.options[name] = words[++i];
      } else {
        return usage_error("option '" + name + "' needs a value");
      }
    } else {
      if (inline_value) return usage_error("option '" + name + "' takes no value");
      line.options[name] = "";
    }
  }
  if (static_cast<int>(line.positionals.size()) > spec->max_positionals) {
    return usage_error("unexpected argument '" + line.positionals[spec->max_positionals] + "' for '" + spec->name + "'");
  }
  return spec->run(line);
}

}  // namespace tailforge
