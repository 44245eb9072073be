//===- Errors.cpp - How einc prints an error line -------------------------===//
#include "Errors.h"

#include "llvm/Support/raw_ostream.h"

namespace einc {

bool printError(const llvm::Twine &message) {
  llvm::errs() << "einc: " << message << "\n";
  return false;
}

int exitError(llvm::StringRef command, const llvm::Twine &message) {
  llvm::errs() << "einc" << (command.empty() ? "" : " ") << command << ": " << message << "\n";
  return 1;
}

} // namespace einc
