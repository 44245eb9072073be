//===- PipelineFuzzMain.cpp - einc-pipeline-fuzz: the differential tester -===//
//
//   einc-pipeline-fuzz [--seed N] [--count N | --seconds S] [--failures DIR]
//                      [--threads N] [--no-gradcheck] [--reference-only]
//                      [--features] [--verbose]
//   einc-pipeline-fuzz --replay FILE.ein [--seed N]
//   einc-pipeline-fuzz --print --seed N
//
// Generates programs from seeds N, N+1, ... and checks each through every
// pass combination, under the settings drawn for its seed (PipelineCheck.h,
// Combinations.h). A failure prints the seed, the combination, what differed
// and the program, and writes the program to DIR/seed-N.ein (replay it with
// --replay). --reference-only leaves out the
// CPU backend (whose JIT compiling is most of the time): the verifier, the
// gradient check and the reference-backend checks remain. Prints the totals
// and how often each setting's values were drawn; exit status 1 when any
// program failed, 2 on a bad command line.
//
//===----------------------------------------------------------------------===//
#include "PipelineCheck.h"
#include "ProgramGenerator.h"

#include "runtime/cpu/ThreadPool.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <sys/stat.h>

using namespace einc::pipelinefuzz;

namespace {

struct Args {
  uint64_t seed = 1;
  int64_t count = 100;
  double seconds = 0; // > 0: run for this long instead of `count` programs
  std::string failures, replay;
  int threads = 1;
  bool gradcheck = true, cpu = true, features = false, verbose = false, print = false;
};

int usage(const std::string &problem) {
  std::cerr << "einc-pipeline-fuzz: " << problem
            << "\nusage: einc-pipeline-fuzz [--seed N] [--count N | --seconds S] [--failures DIR] "
               "[--threads N] [--no-gradcheck] [--reference-only] [--features] [--verbose]\n"
               "       einc-pipeline-fuzz --replay FILE.ein [--seed N]\n"
               "       einc-pipeline-fuzz --print --seed N\n";
  return 2;
}

bool parse(int argc, char **argv, Args &a, std::string &problem) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> const char * {
      if (i + 1 >= argc) {
        problem = arg + " needs a value";
        return nullptr;
      }
      return argv[++i];
    };
    auto number = [&](double &out) {
      const char *v = value();
      if (!v)
        return false;
      char *end = nullptr;
      out = std::strtod(v, &end);
      if (*v == '\0' || *end != '\0' || out < 0) {
        problem = arg + " needs a non-negative number, got '" + v + "'";
        return false;
      }
      return true;
    };
    double n = 0;
    if (arg == "--seed" || arg == "--count" || arg == "--seconds" || arg == "--threads") {
      if (!number(n))
        return false;
      if (arg == "--seed")
        a.seed = uint64_t(n);
      else if (arg == "--count")
        a.count = int64_t(n);
      else if (arg == "--seconds")
        a.seconds = n;
      else
        a.threads = std::max(1, int(n));
    } else if (arg == "--failures" || arg == "--replay") {
      const char *v = value();
      if (!v)
        return false;
      (arg == "--failures" ? a.failures : a.replay) = v;
    } else if (arg == "--no-gradcheck") {
      a.gradcheck = false;
    } else if (arg == "--reference-only") {
      a.cpu = false;
    } else if (arg == "--features") {
      a.features = true;
    } else if (arg == "--verbose") {
      a.verbose = true;
    } else if (arg == "--print") {
      a.print = true;
    } else {
      problem = "unknown argument '" + arg + "'";
      return false;
    }
  }
  return true;
}

/// The report of a failure: what a person needs to reproduce and read it.
std::string describe(const CheckResult &r) {
  return "settings: " + r.drawn.label() + "\ncombination: " + r.combination +
         "\nwhat differed: " + r.what;
}

/// How often each value of each drawn setting was checked, and the distinct
/// combinations: "precision: bf16 12, fp32 9, ...".
struct DrawCounts {
  std::map<std::string, std::map<std::string, int64_t>> bySetting;
  std::map<std::string, int64_t> combinations;
  void add(const Combination &c) {
    ++bySetting["precision"][c.precision];
    ++bySetting["fp8"][c.fp8];
    ++bySetting["remat"][c.remat];
    ++bySetting["fusion"][c.fusion];
    ++bySetting["optimizer"]
               [c.optimizer + (c.optimizer == "sgd" && c.momentum > 0 ? "+momentum" : "")];
    ++combinations[c.label()];
  }
  void print(std::ostream &os) const {
    os << "settings drawn (" << combinations.size() << " distinct combinations):\n";
    for (const auto &[setting, counts] : bySetting) {
      os << "  " << setting << ":";
      for (const auto &[value, n] : counts)
        os << " " << value << " " << n;
      os << "\n";
    }
  }
};

std::string commented(const std::string &text) {
  std::istringstream in(text);
  std::string out;
  for (std::string line; std::getline(in, line);)
    out += "# " + line + "\n";
  return out;
}

/// Writes the failing program (with the failure as a comment) to DIR/seed-N.ein.
std::string save(const std::string &dir, uint64_t seed, const std::string &program,
                 const CheckResult &r) {
  if (dir.empty())
    return "";
  mkdir(dir.c_str(), 0755);
  std::string path = dir + "/seed-" + std::to_string(seed) + ".ein";
  std::ofstream out(path);
  out << "# einc-pipeline-fuzz --seed " << seed << "\n" << commented(describe(r)) << program;
  return out ? path : "";
}

int replay(const Args &a) {
  std::ifstream in(a.replay);
  if (!in) {
    std::cerr << "einc-pipeline-fuzz: cannot read '" << a.replay << "'\n";
    return 1;
  }
  std::stringstream text;
  text << in.rdbuf();
  CheckOptions o;
  o.seed = a.seed;
  o.threads = a.threads;
  o.gradcheck = a.gradcheck;
  o.cpu = a.cpu;
  CheckResult r = checkProgram(text.str(), o);
  if (!r.ok) {
    std::cout << a.replay << ": FAIL\n" << describe(r) << "\n";
    return 1;
  }
  std::cout << a.replay << ": OK (" << r.drawn.label() << "; " << r.stats.combinations
            << " pass combinations, " << r.stats.gradEntries << " gradient entries, "
            << r.stats.tensorsCompared << " tensors compared)\n";
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  Args a;
  std::string problem;
  if (!parse(argc, argv, a, problem))
    return usage(problem);
  einrt::setBlasThreads(1); // as einc: the executor splits matmuls itself
  if (!a.replay.empty())
    return replay(a);
  if (a.print) {
    std::cout << generateProgram(a.seed).text;
    return 0;
  }
  auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  CheckStats total;
  DrawCounts drawn;
  int64_t programs = 0, failures = 0, rejected = 0, nonFinite = 0;
  std::map<std::string, int64_t> features;
  for (uint64_t seed = a.seed;; ++seed) {
    if (a.seconds > 0 ? elapsed() >= a.seconds : programs >= a.count)
      break;
    GeneratedProgram program = generateProgram(seed);
    for (const std::string &f : program.features)
      ++features[f];
    CheckOptions o;
    o.seed = seed;
    o.threads = a.threads;
    o.gradcheck = a.gradcheck;
    o.cpu = a.cpu;
    CheckResult r = checkProgram(program.text, o);
    ++programs;
    total.combinations += r.stats.combinations;
    total.passesRun += r.stats.passesRun;
    total.gradEntries += r.stats.gradEntries;
    total.kinkSkips += r.stats.kinkSkips;
    total.tensorsCompared += r.stats.tensorsCompared;
    total.oneStepOnly += r.stats.oneStepOnly;
    total.combinationRuns += r.stats.combinationRuns;
    if (!r.frontEndRejected)
      drawn.add(r.drawn);
    total.kernelsCompiled += r.stats.kernelsCompiled;
    total.compileSeconds += r.stats.compileSeconds;
    if (a.verbose)
      std::cout << "seed " << seed << ": " << (r.ok ? "ok" : "FAIL") << " [" << r.drawn.label()
                << "] (" << r.stats.kernelsCompiled << " kernels compiled in "
                << r.stats.compileSeconds << " s)\n"
                << std::flush;
    if (r.ok)
      continue;
    ++failures;
    rejected += r.frontEndRejected;
    nonFinite += r.nonFinite;
    std::string path = save(a.failures, seed, program.text, r);
    std::cout << "FAIL seed " << seed << "\n"
              << describe(r) << "\n--- program (replay: einc-pipeline-fuzz --replay "
              << (path.empty() ? "FILE" : path) << " --seed " << seed << ") ---\n"
              << program.text << "---\n"
              << std::flush;
  }
  drawn.print(std::cout);
  if (a.features) {
    std::cout << "features (programs using each):\n";
    for (const auto &[name, n] : features)
      std::cout << "  " << name << ": " << n << "\n";
  }
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.1f", elapsed());
  std::cout << "pipeline fuzz: seeds " << a.seed << ".." << a.seed + uint64_t(programs) - 1 << ": "
            << programs << " programs, " << total.combinations << " pass combinations ("
            << total.passesRun << " passes verified after), " << total.gradEntries
            << " gradient entries checked (" << total.kinkSkips << " checks skipped at kinks), "
            << total.tensorsCompared << " tensors compared (" << total.oneStepOnly
            << " adaptive-optimizer runs held to one step), " << total.combinationRuns
            << " steps under their whole combination checked; " << failures << " failures ("
            << rejected << " front-end rejections, " << nonFinite << " non-finite references) in "
            << seconds << " s (" << total.kernelsCompiled << " CPU kernels compiled in "
            << int(total.compileSeconds) << " s)\n";
  return failures ? 1 : 0;
}
