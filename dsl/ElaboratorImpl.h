//===- ElaboratorImpl.h - State shared by the elaborator's parts -*- C++ -*-===//
//
// Internal to dsl/: Elaborator.cpp (statements, expressions, broadcasting),
// Einops.cpp (einsum / rearrange / reduce / repeat), Builtins.cpp (the table of
// built-in functions) and TrainSettings.cpp all work on this one class.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_DSL_ELABORATORIMPL_H
#define EINC_DSL_ELABORATORIMPL_H

#include "dsl/Elaborator.h"
#include "dsl/Emitter.h"
#include "dsl/Pattern.h"
#include "dsl/Shape.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"

#include <map>
#include <optional>
#include <set>
#include <string>

namespace ein::dsl {

/// What an expression evaluates to: a tensor or a compile-time number.
struct Value {
  /// Poison: the value of a name whose definition failed; its uses report
  /// nothing more (the first error said it all).
  enum class Kind { Tensor, Number, Poison };
  Kind kind = Kind::Number;
  Tensor tensor;
  double number = 0;
  bool isInteger = false;

  static Value ofTensor(Tensor t) {
    Value v;
    v.kind = Kind::Tensor;
    v.tensor = std::move(t);
    return v;
  }
  static Value ofNumber(double n, bool isInteger) {
    Value v;
    v.number = n;
    v.isInteger = isInteger;
    return v;
  }
  static Value poison() {
    Value v;
    v.kind = Kind::Poison;
    return v;
  }
  bool isTensor() const { return kind == Kind::Tensor; }
  bool isPoison() const { return kind == Kind::Poison; }
};

/// `f32[batch=256, window=8]`
std::string formatTensor(const Tensor &t);

class Elaborator {
public:
  Elaborator(const SourceFile &file, DiagnosticEngine &diags, mlir::MLIRContext &context,
             const ElaborateOptions &options);

  mlir::OwningOpRef<mlir::ModuleOp> run(const Program &program);

  // --- Shared by Einops.cpp and Builtins.cpp ---------------------------------
  DiagnosticEngine &diags;
  DimTable dims;
  Emitter emit;

  std::optional<Value> expr(const Expr &e);
  /// Evaluates `e`, requiring a tensor; `what` names it in the error.
  std::optional<Tensor> tensorOf(const Expr &e, llvm::StringRef what);
  /// Evaluates `e`, requiring a float tensor.
  std::optional<Tensor> floatTensorOf(const Expr &e, llvm::StringRef what);
  /// A compile-time number (literals, dims, + - * / **, sqrt/exp/log).
  std::optional<double> constantNumber(const Expr &e);
  /// A compile-time integer (exact division or an error).
  std::optional<int64_t> constantInteger(const Expr &e);

  /// Applies an elementwise binary operator, broadcasting by axis name.
  /// `spelling` is the operator as the user wrote it (`+`, `max`, ...).
  std::optional<Value> binaryOp(llvm::StringRef spelling, SourceLoc loc, const Value &lhs,
                                const Value &rhs);
  /// Brings two tensors to one shape by axis name (one's axes ⊆ the other's).
  std::optional<std::pair<Tensor, Tensor>> broadcastByName(llvm::StringRef spelling, SourceLoc loc,
                                                           const Tensor &lhs, const Tensor &rhs);
  /// Broadcasts `x` to `target`'s axes (x's axes must be a subset).
  std::optional<Tensor> broadcastTo(const Tensor &x, const Axes &target, SourceLoc loc,
                                    llvm::StringRef spelling);

  /// The column of byte `offset` inside the string literal `str`.
  SourceLoc locInString(const Expr &str, unsigned offset) const;
  /// Checks a pattern axis name against the operand's axis: a declared dim
  /// name must not read an axis carrying another declared name, and sizes of
  /// declared dims must agree. Returns false after reporting.
  bool checkAxisName(llvm::StringRef patternName, SourceLoc loc, const Axis &operandAxis,
                     const Tensor &operand, unsigned operandIndex);

  mlir::Location mlirLoc(SourceLoc loc);
  /// Records how many positions a loss averages over (cross_entropy's
  /// targets): the tokens one step trains on, for reports.
  void recordLossPositions(int64_t n) { lossPositions_ += n; }
  /// Records a cross_entropy's result: a loss that is one of them, and
  /// nothing more, is in nats per token (bits per byte on byte tokens).
  void recordCrossEntropy(mlir::Value v) { crossEntropies_.insert(v); }
  void addCrossEntropyOutput();
  mlir::Type f32() { return builder_.getF32Type(); }
  mlir::Type i32() { return builder_.getI32Type(); }

private:
  friend struct StatementRunner;

  // Statements.
  void declareDims(const Program &program);
  void statement(const Stmt &s);
  void declareInput(const Stmt &s);
  void declareParam(const Stmt &s);
  void assign(const Stmt &s);
  void forLoop(const Stmt &s);
  void trainSection(const Stmt &s);
  std::optional<mlir::DictionaryAttr> initializer(const Stmt &s);
  std::optional<Axes> declaredShape(llvm::ArrayRef<AxisSpec> specs, bool allowEllipsis);
  std::optional<mlir::Type> elementType(llvm::StringRef name, SourceLoc loc);

  // Expressions.
  std::optional<Value> call(const Expr &e);
  std::optional<Value> callUser(const Expr &e, const Stmt &fn);
  std::optional<Value> index(const Expr &e);
  std::optional<Value> lookup(const std::string &name, SourceLoc loc);
  bool bindFnParam(const FnParam &p, const Tensor &arg, const Expr &argExpr,
                   std::optional<Axes> &ellipsis, const std::string &fnName, bool isResult = false);

  void finish();

  /// Tags every op created inside a `for` iteration with `ein.layer`
  /// ("layer.3"), so reports can attribute costs to layers.
  struct LayerTagger : public mlir::OpBuilder::Listener {
    std::string layer;
    void notifyOperationInserted(mlir::Operation *op, mlir::OpBuilder::InsertPoint) override {
      if (!layer.empty())
        op->setAttr("ein.layer", mlir::StringAttr::get(op->getContext(), layer));
    }
  };

  mlir::MLIRContext &context_;
  const SourceFile &file_;
  const ElaborateOptions &options_;
  mlir::OpBuilder builder_;
  LayerTagger layerTagger_;
  mlir::OwningOpRef<mlir::ModuleOp> module_;
  mlir::func::FuncOp forward_;
  mlir::Block *body_ = nullptr;

  struct Argument {
    std::string name;
    bool isParam = false;
    bool frozen = false; // a `buffer`: never trained (ein.frozen)
    Axes axes;
    mlir::DictionaryAttr init;
  };
  std::vector<Argument> inputs_, params_;
  std::map<std::string, SourceLoc> argumentNames_;
  std::set<std::string> bufferNames_; // the `buffer`s among them

  /// Variable scopes: [0] the program's, then one per active user-fn call.
  std::vector<std::map<std::string, Value>> scopes_;
  std::map<std::string, const Stmt *> functions_;
  std::vector<std::string> loopPrefix_; // "layer.3" per active loop
  unsigned callDepth_ = 0;
  int64_t totalTrips_ = 0;
  /// Dims whose definition failed: later uses report nothing more.
  std::set<std::string> failedDims_;

public:
  bool dimFailed(llvm::StringRef name) const { return failedDims_.count(name.str()) != 0; }

private:
  /// Adds `name` to the `ein.let` names of the op computing `value`.
  void recordLetName(mlir::Value value, const std::string &name);

  std::optional<Tensor> loss_;
  SourceLoc lossLoc_;
  std::vector<std::pair<std::string, Tensor>> outputs_;
  einrt::TrainSettings train_;
  std::map<std::string, SourceLoc> trainLocs_; // where the section sets each key
  bool sawTrain_ = false;
  int64_t lossPositions_ = 0;
  llvm::DenseSet<mlir::Value> crossEntropies_;
};

// --- Einops.cpp ---------------------------------------------------------------
std::optional<Value> elaborateEinsum(Elaborator &E, const Expr &call);
std::optional<Value> elaborateRearrange(Elaborator &E, const Expr &call);
std::optional<Value> elaborateReduce(Elaborator &E, const Expr &call);
std::optional<Value> elaborateRepeat(Elaborator &E, const Expr &call);

// --- Builtins.cpp -------------------------------------------------------------
/// Returns std::nullopt with `handled` false when `call.callee` is no built-in.
std::optional<Value> elaborateBuiltin(Elaborator &E, const Expr &call, bool &handled);
bool isBuiltinName(llvm::StringRef name);
/// The function an unknown name probably means.
struct FunctionSuggestion {
  std::string name;
  std::string usage;   // a built-in's arguments; empty for a user fn
  SourceLoc definedAt; // a user fn's name in its `fn`; invalid for a built-in
};
/// The closest of the built-ins and the user fns `fns` (name, where defined)
/// to `name` by typoDistance (1 edit for names of 3-5 characters, 2 up to 9,
/// 3 beyond; user fns win ties), or the built-in that another framework's
/// name (swish, sum, matmul, ...) corresponds to.
std::optional<FunctionSuggestion>
suggestFunction(llvm::StringRef name, llvm::ArrayRef<std::pair<llvm::StringRef, SourceLoc>> fns);

// --- TrainSettings.cpp --------------------------------------------------------
/// Reads one `key = value` of a `train { }` section (or, with `value` null,
/// `--set key=overrideText`) into `settings`; false after reporting.
bool trainSetting(Elaborator &E, llvm::StringRef key, SourceLoc loc, const Expr *value,
                  llvm::StringRef overrideText, einrt::TrainSettings &settings);
/// The settings given, as the module's `ein.train` dictionary.
mlir::DictionaryAttr trainAttribute(const einrt::TrainSettings &settings, mlir::Builder &b);
bool isTrainKey(llvm::StringRef key);

} // namespace ein::dsl

#endif // EINC_DSL_ELABORATORIMPL_H
