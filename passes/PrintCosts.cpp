//===- PrintCosts.cpp - Test pass: print the cost and memory ledgers ------===//
//
// `ein-print-costs{func=train_step ops=false}` prints, to stdout, the
// analyses of passes/Analysis.h over one function in a stable text for
// FileCheck: with `ops`, one line per op
//
//   op <i> <name> <kind> <phase> <layer or -> flops <n> trans <n> read <n> write <n>
//
// then the totals, one `<what> <number>` a line (docs/analyses.md). The IR
// is left unchanged.
//
//===----------------------------------------------------------------------===//
#include "passes/Analysis.h"
#include "passes/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::ein {
#define GEN_PASS_DEF_EINPRINTCOSTS
#include "passes/Passes.h.inc"
} // namespace mlir::ein

using namespace mlir;
using namespace mlir::ein;

namespace {

struct EinPrintCosts : public ein::impl::EinPrintCostsBase<EinPrintCosts> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto fn = module.lookupSymbol<func::FuncOp>(funcName);
    if (!fn || fn.isExternal()) {
      module.emitError() << "ein-print-costs: no function @" << funcName;
      return signalPassFailure();
    }
    std::vector<OpCost> costs = analyzeCosts(fn);
    FusedValues values;
    if (fused) {
      FusionSummary f = applyFusionToCosts(fn, costs);
      values = fusedValues(fn);
      llvm::outs() << "fusion " << f.fusedKernels << " kernels " << f.fusedOps << " ops "
                   << f.foldedBroadcasts << " broadcasts in place, " << f.epilogues
                   << " epilogues reading " << f.epilogueBytes << " bytes from cache, bytes "
                   << f.bytesUnfused << " -> " << f.bytes << "\n";
    }
    MemoryLedger mem = analyzeMemory(fn, irByteWidth, fused ? &values : nullptr);
    llvm::raw_ostream &os = llvm::outs();
    os << "costs of @" << funcName << "\n";
    // forward, backward, optimizer, recompute (clones of forward ops: ein-remat)
    int64_t flops[4] = {0, 0, 0, 0}, model[4] = {0, 0, 0, 0};
    int64_t transcendentals = 0, read = 0, written = 0;
    for (auto [i, c] : llvm::enumerate(costs)) {
      int p = c.phase == "forward" ? 0 : c.phase == "backward" ? 1 : c.phase == "recompute" ? 3 : 2;
      flops[p] += c.flops;
      if (c.isModelFlop)
        model[p] += c.flops;
      transcendentals += c.transcendentals;
      read += c.bytesRead;
      written += c.bytesWritten;
      if (printOps)
        os << "op " << i << " " << c.name << " " << c.kind << " " << c.phase << " "
           << (c.layer.empty() ? "-" : c.layer) << " flops " << c.flops << " trans "
           << c.transcendentals << " read " << c.bytesRead << " write " << c.bytesWritten
           << " live " << mem.liveAfter[i] << "\n";
    }
    os << "ops " << costs.size() << "\n";
    os << "flops forward " << flops[0] << "\n";
    os << "flops backward " << flops[1] << "\n";
    os << "flops optimizer " << flops[2] << "\n";
    if (flops[3] != 0)
      os << "flops recompute " << flops[3] << "\n";
    os << "model flops " << model[0] + model[1] << "\n";
    os << "model flops forward " << model[0] << "\n";
    os << "model flops backward " << model[1] << "\n";
    os << "transcendentals " << transcendentals << "\n";
    os << "bytes read " << read << "\n";
    os << "bytes written " << written << "\n";
    os << "params " << mem.paramCount << "\n";
    os << "param bytes " << mem.params << "\n";
    os << "grad bytes " << mem.grads << "\n";
    os << "optimizer bytes " << mem.optimizerState << "\n";
    os << "input bytes " << mem.inputs << "\n";
    os << "activation bytes " << mem.activations << " in " << mem.activationCount << " values\n";
    os << "saved input bytes " << mem.savedInputs << "\n";
    os << "peak bytes " << mem.peak << " at ";
    if (mem.peakOpIndex >= 0)
      os << "op " << mem.peakOpIndex << " " << mem.peakOp << "\n";
    else
      os << "entry\n";
    markAllAnalysesPreserved();
  }
};

} // namespace
