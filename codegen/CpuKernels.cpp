//===- CpuKernels.cpp - Non-contraction ops as JIT-compiled CPU kernels ---===//
//
// add() describes an op (codegen/CpuKernelGen.h) and deduplicates it by its
// signature; compile() generates one MLIR module holding every kernel not
// yet in the process cache, lowers it to the LLVM dialect with bare-pointer
// memref arguments, and JIT-compiles it with mlir::ExecutionEngine at O3
// for the host CPU. The engine's packed wrapper of each function
// (`_mlir_<name>`, `void(void **args)`, args[i] pointing at the i-th
// argument) is exactly runtime/Program.h's KernelFn: with bare pointers,
// argument i is the data pointer of buffer i.
//
// The process cache maps signatures to function pointers; the engines that
// own the code are kept for the life of the process (never destroyed, so no
// exit-time ordering problems with LLVM's globals). New kernels are split
// into up to min(hardware threads, 8) modules of at least ~24 kernels that
// compile on parallel threads. Environment: EINC_JIT_THREADS=N overrides the
// thread count; EINC_DUMP_KERNEL_MLIR=1 prints the generated and the lowered
// MLIR to stderr.
//
//===----------------------------------------------------------------------===//
#include "codegen/CpuKernels.h"

#include "codegen/CpuKernelGen.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/SubtargetFeature.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <unordered_map>

using namespace mlir;

namespace ein::codegen {
namespace {

/// Process-wide: compiled kernels by signature, and the engines owning them.
struct ProcessCache {
  std::mutex mutex;
  std::unordered_map<std::string, einrt::KernelFn> kernels;
  std::vector<std::unique_ptr<ExecutionEngine>> engines;
  int64_t nextName = 0;
};

ProcessCache &cache() {
  static ProcessCache *c = new ProcessCache(); // deliberately never destroyed
  return *c;
}

void initialiseLLVM() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

/// Kernels compiled together: one module, one engine.
struct Chunk {
  std::vector<const KernelSpec *> specs;
  std::vector<std::string> names;
  std::vector<int64_t> indices; // in the compiler's table
  bool keepIR = false;
  // Results:
  std::string error;
  std::string optimizedIR;
  std::unique_ptr<ExecutionEngine> engine;
  std::vector<einrt::KernelFn> fns;
};

/// Generates, lowers and JIT-compiles one chunk (in a context of its own,
/// so chunks can compile on separate threads).
void compileChunk(Chunk &chunk) {
  DialectRegistry registry;
  registry.insert<func::FuncDialect, arith::ArithDialect, math::MathDialect, memref::MemRefDialect,
                  scf::SCFDialect, cf::ControlFlowDialect, LLVM::LLVMDialect>();
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  std::string diagnostics;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
    diagnostics += "\n  " + d.str();
    return success();
  });
  OwningOpRef<ModuleOp> module = ModuleOp::create(UnknownLoc::get(&context));
  for (size_t k = 0; k < chunk.specs.size(); ++k)
    generateKernel(*chunk.specs[k], chunk.names[k], *module);
  if (failed(verify(*module))) {
    chunk.error = "internal error: a generated CPU kernel does not verify" + diagnostics;
    return;
  }
  if (std::getenv("EINC_DUMP_KERNEL_MLIR"))
    module->print(llvm::errs());

  // exp, log, tanh, ... as polynomial approximations (a few ulp in f32)
  // instead of libm calls: straight-line arithmetic the loop vectoriser can
  // widen, where one libm call per element cannot be.
  {
    RewritePatternSet approximations(&context);
    populateMathPolynomialApproximationPatterns(approximations);
    if (failed(applyPatternsAndFoldGreedily(*module, std::move(approximations)))) {
      chunk.error = "internal error: expanding math functions in a CPU kernel failed" + diagnostics;
      return;
    }
  }

  PassManager pm(&context);
  pm.addPass(createConvertSCFToCFPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  ConvertFuncToLLVMPassOptions funcOptions;
  funcOptions.useBarePtrCallConv = true; // one data pointer per buffer
  pm.addPass(createConvertFuncToLLVMPass(funcOptions));
  pm.addPass(createReconcileUnrealizedCastsPass());
  if (failed(pm.run(*module))) {
    chunk.error = "internal error: lowering the CPU kernels to LLVM failed" + diagnostics;
    return;
  }

  // The optimiser gets a host TargetMachine: without it the loop vectoriser
  // has no cost model for the host's vector units and does nothing useful.
  auto tmBuilder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!tmBuilder) {
    chunk.error = "cannot detect the host CPU: " + llvm::toString(tmBuilder.takeError());
    return;
  }
  // EINC_JIT_CPU=NAME (an LLVM CPU name such as haswell) compiles for that
  // CPU's features instead of the host's: how the determinism matrix
  // (scripts/test-matrix) runs AVX2 kernels on an AVX-512 machine. It must
  // name a CPU whose instructions this machine runs.
  const char *jitCpu = std::getenv("EINC_JIT_CPU");
  if (jitCpu && *jitCpu) {
    tmBuilder->setCPU(jitCpu);
    tmBuilder->getFeatures() = llvm::SubtargetFeatures();
  }
  auto tm = tmBuilder->createTargetMachine();
  if (tm && jitCpu && *jitCpu && !(*tm)->getMCSubtargetInfo()->isCPUStringValid(jitCpu)) {
    chunk.error = std::string("EINC_JIT_CPU: '") + jitCpu + "' is not a CPU LLVM knows for " +
                  tmBuilder->getTargetTriple().str();
    return;
  }
  // The JIT's code generator targets the host too (its own TargetMachine).
  auto codegenTM = tm ? tmBuilder->createTargetMachine() : nullptr;
  if (!tm || !codegenTM) {
    chunk.error = "cannot create a TargetMachine for the host: " +
                  llvm::toString(tm ? codegenTM.takeError() : tm.takeError());
    return;
  }
  auto optimise = makeOptimizingTransformer(3, 0, tm->get());
  auto transformer = [&](llvm::Module *m) -> llvm::Error {
    if (auto err = optimise(m))
      return err;
    if (chunk.keepIR) {
      llvm::raw_string_ostream os(chunk.optimizedIR);
      m->print(os, nullptr);
    }
    return llvm::Error::success();
  };
  ExecutionEngineOptions options;
  options.transformer = transformer;
  options.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Aggressive;
  options.enableGDBNotificationListener = false;
  options.enablePerfNotificationListener = false;
  auto engine = ExecutionEngine::create(*module, options, std::move(*codegenTM));
  if (!engine) {
    chunk.error =
        "JIT compilation of the CPU kernels failed: " + llvm::toString(engine.takeError()) +
        diagnostics;
    return;
  }
  for (const std::string &name : chunk.names) {
    // The packed wrapper `_mlir_<name>`: void(void **args), args[i] points
    // at argument i, a bare data pointer: runtime/Program.h's KernelFn.
    auto fn = (*engine)->lookupPacked(name);
    if (!fn) {
      chunk.error = "JIT lookup of " + name + " failed: " + llvm::toString(fn.takeError());
      return;
    }
    chunk.fns.push_back(*fn);
  }
  chunk.engine = std::move(*engine);
}

} // namespace

struct KernelCompiler::Impl {
  std::vector<KernelSpec> specs; // by index
  std::unordered_map<std::string, int64_t> byKey;
  std::vector<einrt::KernelEntry> table;
  double seconds = 0;
  int64_t compiled = 0, cached = 0;
  bool keepIR = false;
  std::string optimizedIR;
};

KernelCompiler::KernelCompiler() : impl_(std::make_unique<Impl>()) {}
KernelCompiler::~KernelCompiler() = default;

std::unique_ptr<KernelCompiler> KernelCompiler::create() {
  initialiseLLVM();
  return std::unique_ptr<KernelCompiler>(new KernelCompiler());
}

FailureOr<int64_t> KernelCompiler::add(Operation *op) {
  auto start = std::chrono::steady_clock::now();
  auto spec = describeKernel(op);
  if (failed(spec))
    return failure();
  int64_t index = add(std::move(*spec));
  impl_->seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return index;
}

int64_t KernelCompiler::add(KernelSpec spec) {
  auto it = impl_->byKey.find(spec.key);
  if (it != impl_->byKey.end())
    return it->second;
  int64_t index = int64_t(impl_->specs.size());
  impl_->byKey.emplace(spec.key, index);
  impl_->specs.push_back(std::move(spec));
  impl_->table.push_back(nullptr);
  return index;
}

LogicalResult KernelCompiler::compile() {
  auto start = std::chrono::steady_clock::now();
  auto finish = [&](LogicalResult r) {
    impl_->seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
  };
  ProcessCache &pc = cache();
  std::lock_guard<std::mutex> lock(pc.mutex);

  // Take what the process already has; collect the rest (one per key).
  std::vector<int64_t> fresh;
  for (size_t i = 0; i < impl_->specs.size(); ++i) {
    if (impl_->table[i].fn)
      continue;
    auto it = pc.kernels.find(impl_->specs[i].key);
    if (it != pc.kernels.end()) {
      impl_->table[i] = {it->second, parallelExtent(impl_->specs[i])};
      ++impl_->cached;
    } else {
      fresh.push_back(int64_t(i));
    }
  }
  if (fresh.empty())
    return finish(success());

  // Independent modules compile in parallel (one engine each): worth it from
  // a few dozen kernels (a training step has about a hundred).
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  if (const char *env = std::getenv("EINC_JIT_THREADS"))
    threads = std::max(1, std::atoi(env));
  size_t chunks = std::min<size_t>({threads, 8, (fresh.size() + 23) / 24});
  if (impl_->keepIR || chunks == 0)
    chunks = 1;
  std::vector<Chunk> work(chunks);
  for (size_t k = 0; k < fresh.size(); ++k) {
    Chunk &c = work[k * chunks / fresh.size()];
    c.specs.push_back(&impl_->specs[fresh[k]]);
    c.names.push_back("ein_kernel_" + std::to_string(pc.nextName++));
    c.indices.push_back(fresh[k]);
  }
  work[0].keepIR = impl_->keepIR;
  if (chunks == 1) {
    compileChunk(work[0]);
  } else {
    std::vector<std::thread> pool;
    for (size_t c = 1; c < chunks; ++c)
      pool.emplace_back([&work, c] { compileChunk(work[c]); });
    compileChunk(work[0]);
    for (std::thread &t : pool)
      t.join();
  }
  bool ok = true;
  for (Chunk &c : work) {
    if (!c.error.empty()) {
      llvm::errs() << c.error << "\n";
      ok = false;
      continue;
    }
    for (size_t k = 0; k < c.indices.size(); ++k) {
      pc.kernels[impl_->specs[c.indices[k]].key] = c.fns[k];
      impl_->table[c.indices[k]] = {c.fns[k], parallelExtent(impl_->specs[c.indices[k]])};
      ++impl_->compiled;
    }
    pc.engines.push_back(std::move(c.engine));
  }
  if (impl_->keepIR && ok)
    impl_->optimizedIR = std::move(work[0].optimizedIR);
  return finish(success(ok));
}

const std::vector<einrt::KernelEntry> &KernelCompiler::table() const { return impl_->table; }
double KernelCompiler::compileSeconds() const { return impl_->seconds; }
int64_t KernelCompiler::compiledCount() const { return impl_->compiled; }
int64_t KernelCompiler::cachedCount() const { return impl_->cached; }

void KernelCompiler::setKeepOptimizedIR(bool keep) { impl_->keepIR = keep; }
const std::string &KernelCompiler::optimizedIR() const { return impl_->optimizedIR; }
int64_t KernelCompiler::kernelCount() const { return int64_t(impl_->specs.size()); }
const std::string &KernelCompiler::signature(int64_t index) const {
  return impl_->specs[index].key;
}

} // namespace ein::codegen
