//===- ein-opt.cpp - mlir-opt for the ein dialect -------------------------===//
//
// Parses, verifies, transforms and prints ein IR:
//   ein-opt input.mlir -canonicalize -cse
//
//===----------------------------------------------------------------------===//

#include "ir/EinOps.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  // MLIR's generic passes: canonicalize, cse, inline, symbol-dce, ...
  mlir::registerTransformsPasses();

  // einc's passes and pipelines: ein-autodiff, ein-train-step,
  // ein-build-train-step, ...
  mlir::ein::registerEinPassesAndPipelines();

  mlir::DialectRegistry registry;
  registry.insert<mlir::ein::EinDialect, mlir::func::FuncDialect>();
  return mlir::asMainReturnCode(mlir::MlirOptMain(argc, argv, "ein optimizer driver\n", registry));
}
