//===- OptionsCommand.h - The pieces einc's command line is built of -*- C++ -*-===//
//
// Internal to the command line (Options.cpp, OptionsFlags.cpp): who reads
// it, the usage error every bad value throws, the value parsers, and one
// command's CLI11 app with its flags. Compiled with exceptions (library
// EincCommandLine); nothing of it is seen outside.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_TOOLS_EINC_OPTIONSCOMMAND_H
#define EINC_TOOLS_EINC_OPTIONSCOMMAND_H

#include "Options.h"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace einc::cli {

/// Who reads the command line: einc, or an executable of `einc compile`
/// (its name in messages and help; no model file; its own commands).
struct Tool {
  std::string name = "einc";
  bool executable = false;
};

/// A bad command line: the message, without the "(see ...)" hint.
struct UsageError {
  std::string message;
};

[[noreturn]] inline void bad(const std::string &message) { throw UsageError{message}; }

/// The whole of `text` as an integer >= min, else nullopt.
std::optional<int64_t> parseInteger(const std::string &text, int64_t min);
/// The whole of `text` as a finite number, else nullopt.
std::optional<double> parseReal(const std::string &text);
int64_t count(const std::string &flag, const std::string &v, int64_t min);
/// A positive number, optionally with a suffix K, M, B or G, T (10^3 .. 10^12).
std::optional<double> parseQuantity(std::string s);
std::string choice(const std::string &what, const std::string &v,
                   const std::vector<std::string> &choices);

/// One command's flags: CLI11 collects each flag's words, `apply` converts
/// them into Options after parsing.
struct Command {
  const Tool *tool = nullptr;
  std::unique_ptr<CLI::App> app;
  std::deque<std::vector<std::string>> values; // one per flag with a value
  std::vector<std::function<void()>> apply;    // in registration order
  std::vector<std::string> files;              // the positional words
  bool help = false;

  /// A flag with a value; `convert` runs on each occurrence, in order.
  void value(const std::string &names, const std::string &valueName, const std::string &description,
             std::function<void(const std::string &)> convert,
             const std::string &group = "Options") {
    std::vector<std::string> &words = values.emplace_back();
    app->add_option(names, words, description)
        ->type_name(valueName)
        ->allow_extra_args(false)
        ->group(group);
    apply.push_back([&words, convert] {
      for (const std::string &w : words)
        convert(w);
    });
  }

  void flag(const std::string &names, const std::string &description, bool &target,
            const std::string &group = "Options") {
    app->add_flag(names, target, description)->group(group);
  }
};

using Builder = void (*)(Command &, Options &);

/// Each command's flags (OptionsFlags.cpp).
void buildCheck(Command &c, Options &o);
void buildEmit(Command &c, Options &o);
void buildRun(Command &c, Options &o);
void buildCalibrate(Command &c, Options &o);
void buildReport(Command &c, Options &o);
void buildData(Command &c, Options &o);
void buildTrain(Command &c, Options &o);
void buildSample(Command &c, Options &o);
void buildCompile(Command &c, Options &o);
void buildExecutableReport(Command &c, Options &o);
void buildInfo(Command &c, Options &o);
void buildExecutableCheck(Command &c, Options &o);

} // namespace einc::cli

#endif // EINC_TOOLS_EINC_OPTIONSCOMMAND_H
