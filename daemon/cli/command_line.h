// What the parser made of the `tailforge` binary's argv (daemon/cli/cli.h parses it): the
// command, its options and positional arguments, with typed getters; and the shell-like split of
// a command written as one string. Every command takes one.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"

namespace tailforge {

// What the parser made of argv: the command, its options (flag -> value, "" for switches),
// positional arguments, and the words after `--`, taken as they are (`model add ... -- perl x.pl`).
struct CommandLine {
  std::string command;
  std::map<std::string, std::string> options;
  std::vector<std::string> positionals;
  std::vector<std::string> rest;
  std::map<std::string, std::vector<std::string>> repeated;  // every value a flag was given, in order

  bool has(const std::string& flag) const { return options.count(flag) > 0; }
  // Every value of a flag that may be given more than once (`--hip-include A --hip-include B`).
  std::vector<std::string> get_all(const std::string& flag) const {
    auto it = repeated.find(flag);
    return it == repeated.end() ? std::vector<std::string>{} : it->second;
  }
  std::string get(const std::string& flag, const std::string& fallback = "") const {
    auto it = options.find(flag);
    return it == options.end() ? fallback : it->second;
  }
  // The value of a flag declared as a whole number or a number (cli.cpp checked its form before
  // the command ran); `fallback` when the flag was not given.
  int64_t get_int(const std::string& flag, int64_t fallback) const;
  double get_number(const std::string& flag, double fallback) const;
  // A flag declared as two numbers A,B.
  std::optional<std::pair<double, double>> get_number_pair(const std::string& flag) const;
};

// Splits a command written as one string into its words the way a shell does with quotes and
// backslashes ('a b', "a \"b\"", a\ b); nothing is expanded and no shell runs. An unterminated
// quote or a trailing backslash is an error.
Result<std::vector<std::string>> split_command_words(const std::string& text);

}  // namespace tailforge
