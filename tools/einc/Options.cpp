//===- Options.cpp - einc's command line, parsed with CLI11 ---------------===//
//
// One CLI11 app per command, each with the flags that command takes. CLI11
// splits the words (`--flag value`, `--flag=value`, `-oFILE`), finds the
// flags and builds the help; the values are converted here, after parsing,
// so that every problem is one line with einc's own wording. CLI11 throws:
// this file is compiled with exceptions (library EincCommandLine), and no
// exception leaves parseCommandLine.
//
//===----------------------------------------------------------------------===//
#include "Options.h"
#include "OptionsCommand.h"

#include "runtime/base/TerminalText.h"
#include "runtime/core/Backend.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <functional>
#include <memory>
#include <sstream>

namespace einc {
namespace {

using namespace cli;

#include "ExecutableHelpTexts.inc"
#include "HelpTexts.inc"

/// einc's help layout: the command's prose, then each group of flags as
/// "  LABEL  description" (descriptions aligned, continued lines indented),
/// then the footer.
class HelpFormatter : public CLI::FormatterBase {
public:
  std::string make_help(const CLI::App *app, std::string, CLI::AppFormatMode) const override {
    std::ostringstream out;
    out << app->get_description();
    std::vector<std::string> groups;
    for (const CLI::Option *opt : app->get_options())
      if (!opt->get_group().empty() &&
          std::find(groups.begin(), groups.end(), opt->get_group()) == groups.end())
        groups.push_back(opt->get_group());
    for (const std::string &group : groups) {
      out << "\n" << group << ":\n";
      for (const CLI::Option *opt : app->get_options())
        if (opt->get_group() == group)
          out << line(*opt);
    }
    out << "\n" << app->get_footer();
    return out.str();
  }

private:
  static constexpr size_t kColumn = 21;

  static std::string line(const CLI::Option &opt) {
    std::string label;
    for (const std::string &s : opt.get_snames())
      label += (label.empty() ? "-" : ", -") + s;
    for (const std::string &l : opt.get_lnames())
      label += (label.empty() ? "--" : ", --") + l;
    if (opt.get_type_size() != 0)
      label += " " + opt.get_type_name();
    std::string text = "  " + label;
    text += text.size() + 2 <= kColumn ? std::string(kColumn - text.size(), ' ') : "  ";
    for (char c : opt.get_description()) {
      text += c;
      if (c == '\n')
        text += std::string(kColumn, ' ');
    }
    return text + "\n";
  }
};

struct CommandText {
  const char *name;
  const char *about, *footer;
  Builder build;
};

const CommandText kCommandTexts[] = {
    {"check", kCheckAbout, kCheckFooter, buildCheck},
    {"emit", kEmitAbout, kEmitFooter, buildEmit},
    {"run", kRunAbout, kRunFooter, buildRun},
    {"report", kReportAbout, kReportFooter, buildReport},
    {"calibrate", kCalibrateAbout, kCalibrateFooter, buildCalibrate},
    {"data", kDataAbout, kDataFooter, buildData},
    {"train", kTrainAbout, kTrainFooter, buildTrain},
    {"sample", kSampleAbout, kSampleFooter, buildSample},
    {"compile", kCompileAbout, kCompileFooter, buildCompile},
};

/// An executable's commands: `{NAME}` in the texts is its name.
const CommandText kExecutableCommandTexts[] = {
    {"train", kExeTrainAbout, kExeTrainFooter, buildTrain},
    {"sample", kExeSampleAbout, kExeSampleFooter, buildSample},
    {"report", kExeReportAbout, kExeFooter, buildExecutableReport},
    {"info", kExeInfoAbout, kExeFooter, buildInfo},
    {"check", kExeCheckAbout, kExeCheckFooter, buildExecutableCheck},
};

template <size_t N>
const CommandText *findCommand(const CommandText (&texts)[N], const std::string &name) {
  for (const CommandText &t : texts)
    if (name == t.name)
      return &t;
  return nullptr;
}

const CommandText *findCommand(const Tool &tool, const std::string &name) {
  return tool.executable ? findCommand(kExecutableCommandTexts, name)
                         : findCommand(kCommandTexts, name);
}

/// The tool's commands: "check, emit, ... or sample".
std::string commandList(const Tool &tool) {
  std::vector<std::string> names;
  if (tool.executable)
    for (const CommandText &t : kExecutableCommandTexts)
      names.push_back(t.name);
  else
    for (const CommandText &t : kCommandTexts)
      names.push_back(t.name);
  std::string list;
  for (size_t i = 0; i < names.size(); ++i)
    list += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return list;
}

/// `text` with `{NAME}` replaced by the tool's name.
std::string named(const Tool &tool, std::string text) {
  for (size_t at = text.find("{NAME}"); at != std::string::npos; at = text.find("{NAME}", at))
    text.replace(at, 6, tool.name);
  return text;
}

/// The app of `name`, its flags writing into `o`.
std::unique_ptr<Command> makeCommand(const Tool &tool, const std::string &name, Options &o) {
  if (const CommandText *t = findCommand(tool, name)) {
    auto c = std::make_unique<Command>();
    c->tool = &tool;
    c->app = std::make_unique<CLI::App>(named(tool, t->about), tool.name + " " + name);
    c->app->set_help_flag();
    c->app->formatter(std::make_shared<HelpFormatter>());
    c->app->footer(named(tool, t->footer));
    c->app->allow_extras();
    t->build(*c, o);
    c->flag("-h,--help", "show this help", c->help);
    c->app->add_option("files", c->files)->group("");
    return c;
  }
  return nullptr;
}

/// "'einc train', 'einc sample' or 'einc run'": the commands that take `flag`.
std::string commandsTaking(const Tool &tool, const std::string &flag) {
  std::vector<std::string> takers;
  auto consider = [&](const CommandText &t) {
    Options scratch;
    auto c = makeCommand(tool, t.name, scratch);
    if (c->app->get_option_no_throw(flag))
      takers.push_back("'" + tool.name + " " + t.name + "'");
  };
  if (tool.executable)
    for (const CommandText &t : kExecutableCommandTexts)
      consider(t);
  else
    for (const CommandText &t : kCommandTexts)
      consider(t);
  std::string list;
  for (size_t i = 0; i < takers.size(); ++i)
    list += (i == 0 ? "" : i + 1 == takers.size() ? " or " : ", ") + takers[i];
  return list;
}

/// Parses the words after the command into `o`; throws UsageError.
void parseCommand(Command &c, Options &o, std::vector<std::string> words) {
  std::reverse(words.begin(), words.end()); // CLI11 takes them last first
  try {
    c.app->parse(words);
  } catch (const CLI::ArgumentMismatch &e) {
    // "--set: 1 required NAME=VALUE missing": a flag at the end without its value.
    std::string what = e.what();
    bad(what.substr(0, what.find(':')) + " needs a value");
  } catch (const CLI::ParseError &e) {
    bad(einrt::terminalSafe(e.what())); // it may quote a value given
  }
  for (const std::string &extra : c.app->remaining()) {
    if (extra.size() < 2 || extra[0] != '-')
      continue;
    std::string name = extra.substr(0, extra.find('='));
    std::string takers = commandsTaking(*c.tool, name);
    if (!takers.empty())
      bad(name + " applies to " + takers + " only");
    bad("unknown option " + einrt::quoted(extra));
  }
  for (const std::string &extra : c.app->remaining())
    c.files.push_back(extra); // CLI11 keeps words after an unknown one here
  o.help = c.help;
  for (auto &apply : c.apply)
    apply();
  for (const std::string &file : c.files) {
    if (c.tool->executable)
      bad("unexpected argument " + einrt::quoted(file) + " (the model is compiled into " +
          c.tool->name + ")");
    if (o.command == "calibrate" && !o.calibrateGemm)
      bad("'einc calibrate' takes no input file, got " + einrt::quoted(file) +
          " (--gemm FILE.ein times the model's GEMMs)");
    if (!o.input.empty())
      bad("more than one input file (" + einrt::quoted(o.input) + " and " + einrt::quoted(file) +
          ")");
    o.input = file;
  }
}

/// The checks across flags.
void checkCombination(const Tool &tool, Options &o) {
  if (o.input.empty() && (o.command != "calibrate" || o.calibrateGemm) && !tool.executable)
    bad(o.calibrateGemm ? "--gemm needs a model file (einc calibrate --gemm FILE.ein)"
                        : "missing input file");
  if (o.command == "calibrate" && !o.calibrateGemm && !o.overrides.empty())
    bad("--set applies to 'einc calibrate --gemm FILE.ein' only (without --gemm einc "
        "calibrate measures the machine, not a model)");
  if (o.command == "report" && o.clusterTokens > 0 && o.gpus == 0)
    bad("--tokens needs --gpus");
  if (o.command == "report" && o.nodes > 1 && o.gpus == 0)
    bad("--nodes needs --gpus");
  if (o.command == "report" && o.gpus > 0 && o.gpus % o.nodes != 0)
    bad("--gpus " + std::to_string(o.gpus) + " do not divide over --nodes " +
        std::to_string(o.nodes));
  if (o.command == "report" && o.shardOptimizer && o.gpus == 0)
    bad("--shard-optimizer needs --gpus");
  if (o.command == "report" && o.mfu >= 0 && o.clusterTokens == 0)
    bad("--mfu needs --gpus and --tokens");
  if (o.command == "data" && o.dataOut.empty())
    bad("missing --out DIR");
  if (o.command == "train") {
    if (o.trainData.empty())
      bad("missing --data FILE (training tokens; `einc data` writes them)");
    if (!o.stepsGiven)
      bad("missing --steps N (the step at which this run stops)");
    if (o.checkpointDir.empty())
      bad("missing --checkpoint-dir DIR");
    if (o.resetOptimizer && !o.resume)
      bad("--reset-optimizer needs --resume");
    if (o.overwrite && o.resume)
      bad("--overwrite and --resume exclude each other (start over, or continue)");
    if (!o.initFrom.empty() && o.resume)
      bad("--init-from and --resume exclude each other (a new run from a checkpoint's params, "
          "or the same run continued)");
    if (o.keepOptimizer && o.initFrom.empty())
      bad("--keep-optimizer needs --init-from");
    if (o.fastAllreduce && o.distributed.empty())
      bad("--allreduce needs --distributed mpi or nccl");
    if (o.shardOptimizer && o.distributed.empty())
      bad("--shard-optimizer needs --distributed mpi or nccl");
    if (o.distributed == "nccl" && !tool.executable &&
        !einrt::findBackend(o.backend)->deviceCollectives())
      bad("--distributed nccl sums gradients in GPU memory: it needs --backend cuda "
          "(--distributed mpi sums them on the host)");
  }
  if (o.command == "sample" && o.checkpoint.empty())
    bad("missing --checkpoint FILE");
  if (o.command == "run") {
    if (o.steps != 1 && o.mode != "step")
      bad("--steps needs --step");
    if (!o.saveGrads.empty() && o.mode != "grad")
      bad("--save-grads needs the default (gradient) mode");
    if (!o.saveParams.empty() && o.mode != "step")
      bad("--save-params needs --step");
    if (o.gradcheck && o.mode != "grad")
      bad("--gradcheck needs the default (gradient) mode");
    if (o.profile && o.gradcheck)
      bad("--profile and --gradcheck go in separate runs");
    if (!o.backendGiven)
      o.backend = o.f64 || o.gradcheck ? "reference" : "cpu";
    else if (!einrt::findBackend(o.backend)->runsF64() && o.f64)
      bad("--backend " + o.backend + " runs float32 only; drop --f64 or use --backend reference");
  }
}

std::string helpText(const Tool &tool, const std::string &command) {
  Options scratch;
  auto c = makeCommand(tool, command, scratch);
  return c ? c->app->help() : named(tool, tool.executable ? kExeOverview : kOverview);
}

CommandLine parse(const Tool &tool, const std::vector<std::string> &args) {
  CommandLine result;
  Options &o = result.options;
  try {
    if (args.empty())
      bad("missing command");
    if (args[0] == "--version") {
      result.action = CommandLine::Action::Version;
      return result;
    }
    if (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
      result.action = CommandLine::Action::Help;
      result.text = helpText(tool, args.size() > 1 && findCommand(tool, args[1]) ? args[1] : "");
      return result;
    }
    if (!findCommand(tool, args[0]))
      bad("unknown command " + einrt::quoted(args[0]) + "; expected " + commandList(tool));
    o.command = args[0];
    auto command = makeCommand(tool, o.command, o);
    parseCommand(*command, o, std::vector<std::string>(args.begin() + 1, args.end()));
    if (o.help) {
      result.action = CommandLine::Action::Help;
      result.text = command->app->help();
      return result;
    }
    checkCombination(tool, o);
  } catch (const UsageError &e) {
    result.action = CommandLine::Action::Error;
    result.text = tool.name + ": " + e.message + " (see '" + tool.name + " " +
                  (o.command.empty() ? "" : einrt::terminalSafe(o.command) + " ") + "--help')";
  } catch (const std::exception &e) {
    // Not expected from CLI11 once parsed; still no exception leaves here.
    result.action = CommandLine::Action::Error;
    result.text = tool.name + ": cannot read the command line: " + e.what();
  }
  return result;
}

} // namespace

CommandLine parseCommandLine(const std::vector<std::string> &args) { return parse(Tool{}, args); }

CommandLine parseExecutableCommandLine(const std::string &name,
                                       const std::vector<std::string> &args) {
  return parse(Tool{name, true}, args);
}

} // namespace einc
