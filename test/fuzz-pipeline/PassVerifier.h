//===- PassVerifier.h - The verifier after every pass, naming the pass -*- C++ -*-===//
//
// MLIR's PassManager verifies after each pass, but skips the verifier when a
// pass claims to preserve every analysis, and its message does not say which
// pass broke the IR. VerifyEachPass runs mlir::verify after every pass
// (nested ones included) whatever the pass claims, and records the first pass
// that failed or left invalid IR, with the verifier's diagnostics.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_TEST_FUZZ_PIPELINE_PASSVERIFIER_H
#define EINC_TEST_FUZZ_PIPELINE_PASSVERIFIER_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"

#include <memory>
#include <string>

namespace einc::pipelinefuzz {

/// What the instrumentation saw, shared with the caller.
struct PassLog {
  std::string failedPass;  // "" while every pass succeeded and verified
  std::string diagnostics; // every diagnostic emitted while a stage ran
  int passesRun = 0;
  int verified = 0; // verifier runs that passed
};

class VerifyEachPass : public mlir::PassInstrumentation {
public:
  explicit VerifyEachPass(PassLog &log) : log(log) {}
  void runAfterPass(mlir::Pass *pass, mlir::Operation *op) override;
  void runAfterPassFailed(mlir::Pass *pass, mlir::Operation *op) override;

private:
  PassLog &log;
};

/// Adds VerifyEachPass (and MLIR's own verifier) to `pm`.
void instrument(mlir::PassManager &pm, PassLog &log);

/// Collects the context's diagnostics into `log.diagnostics` while alive.
class DiagnosticCapture {
public:
  DiagnosticCapture(mlir::MLIRContext &context, std::string &out);

private:
  mlir::ScopedDiagnosticHandler handler;
};

} // namespace einc::pipelinefuzz

#endif // EINC_TEST_FUZZ_PIPELINE_PASSVERIFIER_H
