//===- Fp8Contractions.h - The fp8 setting: fp8 contractions ----*- C++ -*-===//
//
// The `fp8` setting (none | block | tensor; docs/precision.md): every
// ein.contract of @forward gets its operands fake-quantised to E4M3 and its
// incoming gradient to E5M2 (ein.quantize, ir/EinOps.td), the fp8 training
// recipe's formats; `block` scales each run of 32 elements along an
// operand's contracted dimension by its own power of two (MXFP8), `tensor`
// each tensor by one f32 scale. Run after the precision policy and before
// autodiff, so the backward contractions see the E5M2 gradient and the
// forward's E4M3 operands. Pass: `ein-fp8-contractions{scaling=block}`.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_PASSES_FP8CONTRACTIONS_H
#define EINC_PASSES_FP8CONTRACTIONS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace mlir::ein {

enum class Fp8Scaling { None, Block, Tensor };

/// The block size of `block` scaling (MXFP8's).
constexpr int64_t kFp8BlockSize = 32;

/// "none" | "block" | "tensor", or std::nullopt.
std::optional<Fp8Scaling> parseFp8Scaling(llvm::StringRef word);

/// Wraps every ein.contract of `fn` (one whose operands are not already
/// quantised): each operand in `ein.quantize e4m3` (block: blocks along its
/// last contracted dimension), the result in `ein.quantize none grad e5m2`
/// (block: along the result's last dimension; a rank-0 result per tensor).
/// Returns the number of contractions wrapped. None: nothing.
int64_t applyFp8Contractions(func::FuncOp fn, Fp8Scaling scaling);

/// The bytes an fp8 contraction reads: when both operands of `op` (an
/// ein.contract) are ein.quantize results in e4m3/e5m2, what an fp8 GEMM
/// reads, one byte per element plus the scales (one E8M0 byte per block, one
/// f32 per tensor); std::nullopt for any other op. The report prices such a
/// contraction at the device's fp8 peak (docs/report.md).
std::optional<int64_t> fp8ContractionBytesRead(Operation *op);

/// What an fp8 implementation moves for `op` when it is an ein.quantize
/// (bytes read, bytes written): with a format, its input at `width` in and
/// the fp8 values (1 byte per element) and the scales out, the operand the
/// fp8 contraction reads; with format none, the identity forward that
/// carries the E5M2 gradient rule, nothing (a view, as a reshape).
/// std::nullopt for any other op.
std::optional<std::pair<int64_t, int64_t>>
fp8QuantizeBytes(Operation *op, const std::function<int64_t(Type)> &width);

/// `ein-fp8-contractions`: applyFp8Contractions on @forward (option
/// `scaling`: block | tensor | none; `func`: the function).
/// An unknown `scaling` word fails the pass with a message.
std::unique_ptr<Pass> createEinFp8Contractions(llvm::StringRef scaling = "block");
void registerEinFp8ContractionsPass();

} // namespace mlir::ein

#endif // EINC_PASSES_FP8CONTRACTIONS_H
