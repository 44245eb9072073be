//===- PassVerifier.cpp - The verifier after every pass, naming the pass --===//
#include "PassVerifier.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Pass/Pass.h"

namespace einc::pipelinefuzz {

namespace {
std::string passName(mlir::Pass *pass) {
  llvm::StringRef arg = pass->getArgument();
  return (arg.empty() ? pass->getName() : arg).str();
}
} // namespace

void VerifyEachPass::runAfterPass(mlir::Pass *pass, mlir::Operation *op) {
  ++log.passesRun;
  // Verify the op the pass ran on (for a nested pass: one function).
  if (mlir::succeeded(mlir::verify(op))) {
    ++log.verified;
    return;
  }
  if (log.failedPass.empty())
    log.failedPass = passName(pass) + " (left invalid IR)";
}

void VerifyEachPass::runAfterPassFailed(mlir::Pass *pass, mlir::Operation *op) {
  ++log.passesRun;
  // MLIR's own verifier (run before the instrumentation) also ends here.
  if (log.failedPass.empty())
    log.failedPass =
        passName(pass) + (mlir::failed(mlir::verify(op)) ? " (left invalid IR)" : " (failed)");
}

void instrument(mlir::PassManager &pm, PassLog &log) {
  pm.enableVerifier(true);
  pm.addInstrumentation(std::make_unique<VerifyEachPass>(log));
}

DiagnosticCapture::DiagnosticCapture(mlir::MLIRContext &context, std::string &out)
    : handler(&context, [&out](mlir::Diagnostic &d) {
        out += d.str() + "\n";
        for (const mlir::Diagnostic &note : d.getNotes())
          out += "  note: " + note.str() + "\n";
        return mlir::success();
      }) {}

} // namespace einc::pipelinefuzz
