//===- CpuKernelModule.cpp - Kernels to optimised LLVM IR to object code --===//
//
// EINC_DUMP_KERNEL_MLIR=1 prints the generated MLIR to stderr.
//
//===----------------------------------------------------------------------===//
#include "codegen/CpuKernelModule.h"

#include "codegen/CpuKernelGen.h"
#include "runtime/core/KernelTable.h"

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
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace mlir;

namespace ein::codegen {
namespace {

std::string bodyName(const std::string &symbol) { return symbol + "_body"; }

/// Generates the kernels as MLIR and lowers them to the LLVM dialect.
/// Null after setting `failure` (Internal).
OwningOpRef<ModuleOp> lowerToLLVMDialect(MLIRContext &context, const KernelObjectRequest &r,
                                         const std::vector<std::string> &symbols,
                                         const std::string &diagnostics, einrt::Status &failure) {
  OwningOpRef<ModuleOp> module = ModuleOp::create(UnknownLoc::get(&context));
  for (size_t k = 0; k < r.specs.size(); ++k)
    generateKernel(*r.specs[k], bodyName(symbols[k]), *module);
  if (failed(verify(*module))) {
    failure = einrt::Status::internal("internal error: a generated CPU kernel does not verify" +
                                      diagnostics);
    return nullptr;
  }
  if (std::getenv("EINC_DUMP_KERNEL_MLIR"))
    module->print(llvm::errs());

  // exp, log, tanh, ... as polynomial approximations (a few ulp in f32)
  // instead of libm calls: straight-line arithmetic the loop vectoriser can
  // widen, where one libm call per element cannot be. Not sin and cos:
  // MLIR 19 reduces their argument by one f32 multiple of π/2, which is off
  // by thousands of ulps at the angles rotary embeddings use (positions ×
  // frequencies) and by 2-8 ulps already within ±2π (CpuTrigTest); libm's
  // sinf/cosf (math-to-LLVM's intrinsics, then calls) are the reference's.
  RewritePatternSet approximations(&context);
  populateMathPolynomialApproximationPatterns(approximations);
  llvm::erase_if(approximations.getNativePatterns(), [](const std::unique_ptr<RewritePattern> &p) {
    std::optional<OperationName> root = p->getRootKind();
    return root && (root->getStringRef() == math::SinOp::getOperationName() ||
                    root->getStringRef() == math::CosOp::getOperationName() ||
                    root->getStringRef() == math::ErfOp::getOperationName());
  });
  if (failed(applyPatternsAndFoldGreedily(*module, std::move(approximations)))) {
    failure = einrt::Status::internal(
        "internal error: expanding math functions in a CPU kernel failed" + diagnostics);
    return nullptr;
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
    failure = einrt::Status::internal("internal error: lowering the CPU kernels to LLVM failed" +
                                      diagnostics);
    return nullptr;
  }
  return module;
}

/// `symbol`: void(void **args) calling `body` with *args[i] as argument i
/// (runtime/core/Program.h's KernelFn). The body becomes a local symbol, and is
/// not inlined: inlined, O3 simplifies it a second time in the wrapper
/// (`einc run examples/gpt.ein --step --steps 1` took 13.5 instead of 4.4 s
/// of CPU time) for the same loops.
llvm::Function *addPackedWrapper(llvm::Module &m, llvm::Function &body, const std::string &symbol) {
  llvm::LLVMContext &ctx = m.getContext();
  llvm::Type *ptr = llvm::PointerType::getUnqual(ctx);
  auto *type = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr}, false);
  auto *wrapper = llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage, symbol, m);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", wrapper));
  llvm::SmallVector<llvm::Value *> args;
  for (llvm::Argument &a : body.args()) {
    llvm::Value *slot = b.CreateConstGEP1_64(ptr, wrapper->getArg(0), a.getArgNo());
    args.push_back(b.CreateLoad(a.getType(), b.CreateLoad(ptr, slot)));
  }
  b.CreateCall(&body, args);
  b.CreateRetVoid();
  body.setLinkage(llvm::GlobalValue::InternalLinkage);
  body.addFnAttr(llvm::Attribute::NoInline);
  return wrapper;
}

/// The table and count of runtime/core/KernelTable.h.
void addKernelTable(llvm::Module &m, const KernelObjectRequest &r,
                    llvm::ArrayRef<llvm::Function *> wrappers) {
  llvm::LLVMContext &ctx = m.getContext();
  llvm::Type *i64 = llvm::Type::getInt64Ty(ctx);
  auto *entry = llvm::StructType::get(ctx, {llvm::PointerType::getUnqual(ctx), i64});
  std::vector<llvm::Constant *> entries;
  for (size_t k = 0; k < wrappers.size(); ++k)
    entries.push_back(llvm::ConstantStruct::get(
        entry, {wrappers[k], llvm::ConstantInt::get(i64, parallelExtent(*r.specs[k]))}));
  auto *tableType = llvm::ArrayType::get(entry, entries.size());
  const std::string target = r.target->name;
  new llvm::GlobalVariable(m, tableType, /*isConstant=*/true, llvm::GlobalValue::ExternalLinkage,
                           llvm::ConstantArray::get(tableType, entries),
                           einrt::kernelTableSymbol(r.prefix, target));
  new llvm::GlobalVariable(m, i64, /*isConstant=*/true, llvm::GlobalValue::ExternalLinkage,
                           llvm::ConstantInt::get(i64, int64_t(entries.size())),
                           einrt::kernelCountSymbol(r.prefix, target));
}

} // namespace

einrt::Status compileKernelObject(const KernelObjectRequest &r,
                                  llvm::SmallVectorImpl<char> &object) {
  std::vector<std::string> symbols;
  for (size_t k = 0; k < r.specs.size(); ++k)
    symbols.push_back(einrt::kernelSymbol(r.prefix, r.target->name, r.indices[k]));

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
  einrt::Status lowered;
  OwningOpRef<ModuleOp> module = lowerToLLVMDialect(context, r, symbols, diagnostics, lowered);
  if (!module)
    return lowered;

  // The optimiser gets the target's TargetMachine: without it the loop
  // vectoriser has no cost model for the vector units and does nothing
  // useful. The functions carry the target's CPU and tuning.
  einrt::Expected<std::unique_ptr<llvm::TargetMachine>> machine = createTargetMachine(*r.target);
  if (!machine.ok())
    return machine.takeStatus();
  std::unique_ptr<llvm::TargetMachine> tm = machine.take();
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> m = translateModuleToLLVMIR(*module, llvmContext, "einc_kernels");
  if (!m) {
    return einrt::Status::internal("internal error: translating the CPU kernels to LLVM IR failed" +
                                   diagnostics);
  }
  m->setDataLayout(tm->createDataLayout());
  m->setTargetTriple(tm->getTargetTriple().str());
  std::vector<llvm::Function *> wrappers;
  for (const std::string &symbol : symbols)
    wrappers.push_back(addPackedWrapper(*m, *m->getFunction(bodyName(symbol)), symbol));
  addKernelTable(*m, r, wrappers);
  for (llvm::Function &f : *m) {
    if (f.isDeclaration())
      continue;
    f.addFnAttr("target-cpu", r.target->cpu);
    f.addFnAttr("tune-cpu", r.target->tuneCpu);
    if (r.target->vectorWidth)
      f.addFnAttr("prefer-vector-width", std::to_string(r.target->vectorWidth));
  }

  if (llvm::Error err = makeOptimizingTransformer(3, 0, tm.get())(m.get())) {
    return einrt::Status::internal("internal error: optimising the CPU kernels failed: " +
                                   llvm::toString(std::move(err)));
  }
  if (r.optimizedIR) {
    r.optimizedIR->clear();
    llvm::raw_string_ostream os(*r.optimizedIR);
    m->print(os, nullptr);
  }

  llvm::raw_svector_ostream os(object);
  llvm::legacy::PassManager codegen;
  if (tm->addPassesToEmitFile(codegen, os, nullptr, llvm::CodeGenFileType::ObjectFile)) {
    return einrt::Status::internal(std::string("LLVM cannot emit object code for ") +
                                   r.target->name);
  }
  codegen.run(*m);
  return einrt::Status();
}

} // namespace ein::codegen
