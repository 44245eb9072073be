//===- Options.cpp - einc's command line ----------------------------------===//
#include "Options.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

namespace einc {

namespace {

const char *kOverview = R"(einc — compile einops-style model descriptions for training

Usage: einc <command> [options] FILE.ein

Commands:
  check    parse and check a model; print diagnostics (exit 0 when clean, 1 on errors)
  emit     print a stage of compilation: the syntax tree or the `ein` IR

Options common to every command:
  --set NAME=VALUE   override a `dim` (a positive integer) or a `train { }` setting;
                     repeatable. Example: --set d=512 --set layers=8
  -h, --help         show help (`einc <command> --help` for a command)

Exit status: 0 success, 1 errors in the model or its files, 2 a bad command line.
Run `einc <command> --help` for more.
)";

const char *kCheckHelp = R"(einc check — parse and check a model

Usage: einc check [--set NAME=VALUE]... FILE.ein

Reads FILE.ein (or standard input for `-`), checks syntax, dims, named axes,
einops patterns, element types and the train section, and lowers the model to
the `ein` dialect without printing it. Every problem is printed to stderr as
`file:line:col: error: ...` with the source line and a caret.

Options:
  --set NAME=VALUE   override a `dim` or a `train { }` setting (repeatable)
  -h, --help         show this help

Exit status: 0 when the model is clean, 1 when it has errors, 2 on a bad command line.
)";

const char *kEmitHelp = R"(einc emit — print a stage of compilation

Usage: einc emit [--stage=ast|ir] [-o FILE] [--set NAME=VALUE]... FILE.ein

Stages:
  ast   the syntax tree as parsed (before any checking)
  ir    the `ein` dialect: func.func @forward(inputs..., params...) -> (loss, outputs...),
        as MLIR text that `ein-opt` parses back (the default)

Options:
  --stage=STAGE      ast or ir (default: ir)
  -o FILE            write to FILE instead of standard output
  --set NAME=VALUE   override a `dim` or a `train { }` setting (repeatable)
  -h, --help         show this help

Exit status: 0 on success, 1 when the model has errors, 2 on a bad command line.
)";

bool isCommand(llvm::StringRef s) { return s == "check" || s == "emit"; }

bool fail(const std::string &message) {
  llvm::errs() << "einc: " << message << "\n";
  return false;
}

} // namespace

void printHelp(const std::string &command) {
  if (command == "check")
    llvm::outs() << kCheckHelp;
  else if (command == "emit")
    llvm::outs() << kEmitHelp;
  else
    llvm::outs() << kOverview;
}

std::optional<Options> parseOptions(int argc, char **argv) {
  Options o;
  std::vector<std::string> args(argv + 1, argv + argc);
  size_t i = 0;
  auto usage = [&](const std::string &message) -> std::optional<Options> {
    fail(message + " (see 'einc " + (o.command.empty() ? "" : o.command + " ") + "--help')");
    return std::nullopt;
  };
  if (args.empty())
    return usage("missing command");
  if (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
    o.help = true;
    if (args.size() > 1 && isCommand(args[1]))
      o.command = args[1];
    return o;
  }
  if (!isCommand(args[0]))
    return usage("unknown command '" + args[0] + "'; expected check or emit");
  o.command = args[i++];
  // A flag's value: `--flag=v` or `--flag v`.
  enum class Match { No, Yes, Error };
  auto value = [&](llvm::StringRef arg, llvm::StringRef flag, std::string &out) {
    if (arg == flag) {
      if (i >= args.size()) {
        fail(flag.str() + " needs a value");
        return Match::Error;
      }
      out = args[i++];
      return Match::Yes;
    }
    if (arg.starts_with(flag.str() + "=")) {
      out = arg.drop_front(flag.size() + 1).str();
      return Match::Yes;
    }
    return Match::No;
  };
  while (i < args.size()) {
    llvm::StringRef arg = args[i++];
    std::string v;
    if (arg == "-h" || arg == "--help") {
      o.help = true;
      continue;
    }
    Match m = value(arg, "--set", v);
    if (m == Match::Error)
      return std::nullopt;
    if (m == Match::Yes) {
      size_t eq = v.find('=');
      if (eq == std::string::npos || eq == 0)
        return usage("--set needs NAME=VALUE, got '" + v + "'");
      o.overrides.emplace_back(v.substr(0, eq), v.substr(eq + 1));
      continue;
    }
    m = value(arg, "--stage", v);
    if (m == Match::Error)
      return std::nullopt;
    if (m == Match::Yes) {
      if (o.command != "emit")
        return usage("--stage applies to 'einc emit' only");
      if (v != "ast" && v != "ir")
        return usage("unknown stage '" + v + "'; expected ast or ir");
      o.stage = v;
      continue;
    }
    m = value(arg, "-o", v);
    if (m == Match::Error)
      return std::nullopt;
    if (m == Match::Yes) {
      o.output = v;
      continue;
    }
    if (arg.starts_with("-") && arg != "-")
      return usage("unknown option '" + arg.str() + "'");
    if (!o.input.empty())
      return usage("more than one input file ('" + o.input + "' and '" + arg.str() + "')");
    o.input = arg.str();
  }
  if (!o.help && o.input.empty())
    return usage("missing input file");
  return o;
}

} // namespace einc
