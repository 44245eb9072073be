//===- CheckpointDir.cpp - The directory a training run writes ------------===//
#include "runtime/io/CheckpointDir.h"
#include "runtime/base/TerminalText.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <signal.h>
#include <unistd.h>

namespace einrt {

namespace {

std::string hostName() {
  char name[256] = {0};
  if (::gethostname(name, sizeof name - 1) != 0)
    return "";
  return name;
}

/// "pid 1234", "pid 1234 on host gpu7": who holds the lock on `fd`'s file.
std::string holder(int fd) {
  struct flock who;
  std::memset(&who, 0, sizeof who);
  who.l_type = F_WRLCK;
  who.l_whence = SEEK_SET;
  long pid = ::fcntl(fd, F_GETLK, &who) == 0 && who.l_type != F_UNLCK ? long(who.l_pid) : 0;
  // The file's words: the pid where the kernel cannot say (another PID
  // namespace, another NFS client), and the host.
  char buffer[300] = {0};
  ssize_t n = ::pread(fd, buffer, sizeof buffer - 1, 0);
  std::string words(buffer, n > 0 ? size_t(n) : 0), host;
  if (size_t space = words.find(' '); space != std::string::npos) {
    if (pid <= 0)
      pid = std::strtol(words.c_str(), nullptr, 10);
    host = words.substr(space + 1);
    host = host.substr(0, host.find('\n'));
  }
  std::string said = pid > 0 ? "pid " + std::to_string(pid) : "a process";
  if (!host.empty() && host != hostName())
    said += " on host " + host;
  return said;
}

} // namespace

Expected<std::unique_ptr<CheckpointDirLock>> CheckpointDirLock::acquire(const std::string &dir) {
  std::error_code ec;
  const bool existed = std::filesystem::exists(dir, ec);
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir, ec))
    return Status(StatusCode::Io, "cannot create the checkpoint directory " + einrt::quoted(dir) +
                                      ": " +
                                      (ec ? ec.message() : "a file of that name is in the way"));
  auto unwritable = [&](int err) {
    return Status(StatusCode::Io, "cannot write in the checkpoint directory " + einrt::quoted(dir) +
                                      ": " + std::strerror(err));
  };
  std::string path = dir + "/" + kCheckpointLockName;
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    return unwritable(errno);
  struct flock lock;
  std::memset(&lock, 0, sizeof lock);
  lock.l_type = F_WRLCK; // the whole file
  lock.l_whence = SEEK_SET;
  std::string unlocked;
  Status refused;
  if (::fcntl(fd, F_SETLK, &lock) != 0) {
    int err = errno;
    if (err == ENOLCK || err == EOPNOTSUPP || err == ENOSYS) {
      // No locks here (NFS without lockd): train, but say so.
      unlocked = "note: the checkpoint directory " + einrt::quoted(dir) + " cannot be locked (" +
                 std::strerror(err) + "): nothing stops a second run from writing into it";
    } else if (err == EACCES || err == EAGAIN) {
      refused = Status(StatusCode::Unavailable,
                       "the checkpoint directory " + einrt::quoted(dir) +
                           " is in use by another training run (" + holder(fd) +
                           " holds its lock, " + kCheckpointLockName +
                           "): wait for it to end, stop it (SIGINT or SIGTERM saves and stops "
                           "it), or choose another --checkpoint-dir");
    } else {
      refused =
          Status(StatusCode::Io, "cannot lock " + einrt::quoted(path) + ": " + std::strerror(err));
    }
    if (unlocked.empty()) {
      ::close(fd);
      return refused;
    }
  }
  // The lock file existed: show with a file of the checkpoint writer's own
  // name that new files can be made (and removed) here.
  std::string probe = dir + "/last.safetensors.tmp." + std::to_string(::getpid());
  int probeFd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (probeFd < 0 || ::unlink(probe.c_str()) != 0) {
    int err = errno;
    if (probeFd >= 0)
      ::close(probeFd);
    ::close(fd);
    return unwritable(err);
  }
  ::close(probeFd);
  std::string words = std::to_string(::getpid()) + " " + hostName() + "\n";
  if (::ftruncate(fd, 0) != 0 ||
      ::pwrite(fd, words.data(), words.size(), 0) != ssize_t(words.size())) {
    int err = errno;
    ::close(fd);
    return unwritable(err);
  }
  std::unique_ptr<CheckpointDirLock> held(new CheckpointDirLock(fd));
  held->unlockedNote = unlocked;
  if (!existed)
    held->createdDir = dir;
  return std::move(held);
}

CheckpointDirLock::~CheckpointDirLock() {
  ::close(fd);
  if (createdDir.empty())
    return;
  std::error_code ec;
  for (const auto &entry : std::filesystem::directory_iterator(createdDir, ec))
    if (entry.path().filename() != kCheckpointLockName)
      return; // the run wrote here: it all stays
  if (!ec && std::filesystem::remove(createdDir + "/" + kCheckpointLockName, ec))
    std::filesystem::remove(createdDir, ec);
}

std::vector<std::string> removeStaleTemporaries(const std::string &dir) {
  std::vector<std::string> removed;
  std::error_code ec;
  for (const auto &entry : std::filesystem::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    size_t dot = std::string::npos;
    for (const char *stem : {"last.safetensors.tmp.", "best.safetensors.tmp."})
      if (name.rfind(stem, 0) == 0)
        dot = std::strlen(stem);
    if (dot == std::string::npos || dot == name.size() || name.size() > dot + 9 ||
        name.find_first_not_of("0123456789", dot) != std::string::npos)
      continue;
    pid_t pid = pid_t(std::stol(name.substr(dot)));
    if (pid > 0 && (::kill(pid, 0) == 0 || errno != ESRCH))
      continue; // alive (or not ours to signal: alive)
    if (std::filesystem::remove(entry.path(), ec))
      removed.push_back(entry.path().string());
  }
  return removed;
}

} // namespace einrt
