//===- StopSignals.cpp - SIGINT and SIGTERM: stop at the step boundary ----===//
//
// The handler does only what is async-signal-safe: an atomic store, write(2),
// and on the second signal sigaction(2) back to the default and raise(3)
// (delivered once the handler returns, the three signals being blocked in
// it).
//
//===----------------------------------------------------------------------===//
#include "runtime/train/StopSignals.h"

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstring>
#include <unistd.h>

namespace einrt {

namespace {

std::atomic<int> gReceived{0};
static_assert(std::atomic<int>::is_always_lock_free, "the handler stores it");
char gPrefix[256];
size_t gPrefixLength = 0;
bool gQuiet = false;
constexpr int kSignals[] = {SIGINT, SIGTERM, SIGUSR1};
constexpr int kCount = sizeof kSignals / sizeof kSignals[0];
struct sigaction gPrevious[kCount];

/// Appends `text` to `line` (of `size`) at `at`, cut to fit.
void append(char *line, size_t size, size_t &at, const char *text, size_t length) {
  size_t n = std::min(length, size - at);
  std::memcpy(line + at, text, n);
  at += n;
}

void onSignal(int signal) {
  if (gReceived.load() != 0) {
    struct sigaction dfl;
    std::memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    ::sigaction(signal, &dfl, nullptr);
    ::raise(signal);
    return;
  }
  gReceived.store(signal);
  if (gQuiet)
    return;
  // One write, so that a launcher forwarding stderr keeps the line whole;
  // a live progress line may be open on stdout: start a line of our own.
  static const char kRest[] = ": stopping after this step, once its checkpoint is saved "
                              "(a second Ctrl-C or SIGTERM stops at once, unsaved)\n";
  char line[512];
  size_t at = 0;
  append(line, sizeof line, at, "\n", 1);
  append(line, sizeof line, at, gPrefix, gPrefixLength);
  const char *name = StopSignals::name(signal);
  append(line, sizeof line, at, name, std::strlen(name));
  append(line, sizeof line, at, kRest, sizeof kRest - 1);
  ssize_t ignored = ::write(STDERR_FILENO, line, at);
  (void)ignored;
}

} // namespace

StopSignals::StopSignals(const std::string &prefix, bool quiet) {
  gPrefixLength = std::min(prefix.size(), sizeof gPrefix);
  std::memcpy(gPrefix, prefix.data(), gPrefixLength);
  gQuiet = quiet;
  gReceived.store(0);
  struct sigaction action;
  std::memset(&action, 0, sizeof action);
  action.sa_handler = onSignal;
  action.sa_flags = SA_RESTART; // a blocking read or MPI call goes on
  sigemptyset(&action.sa_mask);
  for (int s : kSignals)
    sigaddset(&action.sa_mask, s);
  for (int i = 0; i < kCount; ++i)
    ::sigaction(kSignals[i], &action, &gPrevious[i]);
}

StopSignals::~StopSignals() {
  for (int i = 0; i < kCount; ++i)
    ::sigaction(kSignals[i], &gPrevious[i], nullptr);
}

int StopSignals::received() { return gReceived.load(); }

const char *StopSignals::name(int signal) {
  switch (signal) {
  case SIGINT:
    return "SIGINT";
  case SIGTERM:
    return "SIGTERM";
  case SIGUSR1:
    return "SIGUSR1";
  default:
    return "a signal";
  }
}

} // namespace einrt
