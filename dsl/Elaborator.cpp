//===- Elaborator.cpp - The program, statements and expressions -----------===//
#include "dsl/ElaboratorImpl.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"

#include "llvm/ADT/StringExtras.h"

#include <cmath>

using namespace mlir;

namespace ein::dsl {

namespace {
constexpr int64_t kMaxLoopTrips = 1024;
constexpr int64_t kMaxTotalTrips = 16384; // nested loops multiply

std::string dtypeName(Type t) {
  if (t.isF32())
    return "f32";
  if (t.isBF16())
    return "bf16";
  if (t.isF16())
    return "f16";
  if (t.isInteger(32))
    return "i32";
  if (t.isInteger(1))
    return "i1";
  return "?";
}
} // namespace

std::string formatTensor(const Tensor &t) {
  return dtypeName(t.elementType()) + formatAxes(t.axes);
}

void registerElaboratorDialects(MLIRContext &context) {
  context.getOrLoadDialect<mlir::ein::EinDialect>();
  context.getOrLoadDialect<func::FuncDialect>();
}

Elaborator::Elaborator(const SourceFile &file, DiagnosticEngine &diags, MLIRContext &context,
                       const ElaborateOptions &options)
    : diags(diags), emit(builder_), context_(context), file_(file), options_(options),
      builder_(&context) {}

Location wholeFileLocation(MLIRContext &context, const SourceFile &file) {
  return FileLineColLoc::get(&context, file.path(), 1, 1);
}

Location Elaborator::mlirLoc(SourceLoc loc) {
  return FileLineColLoc::get(&context_, file_.path(), loc.line, loc.col);
}

SourceLoc Elaborator::locInString(const Expr &str, unsigned offset) const {
  return str.loc.advanced(1 + offset);
}

//===----------------------------------------------------------------------===//
// Program and statements
//===----------------------------------------------------------------------===//

OwningOpRef<ModuleOp> Elaborator::run(const Program &program) {
  registerElaboratorDialects(context_);
  Location wholeFile = wholeFileLocation(context_, file_);
  module_ = ModuleOp::create(wholeFile);
  builder_.setInsertionPointToEnd(module_->getBody());
  forward_ = builder_.create<func::FuncOp>(wholeFile, "forward", builder_.getFunctionType({}, {}));
  body_ = forward_.addEntryBlock();
  builder_.setInsertionPointToEnd(body_);
  builder_.setListener(&layerTagger_);
  emit.setLoc(wholeFile);
  scopes_.emplace_back();

  declareDims(program);
  if (diags.hasErrors())
    return nullptr;
  for (const StmtPtr &s : program.stmts) {
    if (diags.tooMany())
      break;
    statement(*s);
  }
  if (!diags.hasErrors())
    finish();
  if (diags.hasErrors())
    return nullptr;
  return std::move(module_);
}

void Elaborator::declareDims(const Program &program) {
  std::map<std::string, std::string> dimOverrides;
  for (const auto &[name, value] : options_.overrides) {
    if (isTrainKey(name))
      continue;
    bool declared = false;
    for (const StmtPtr &s : program.stmts)
      declared |= s->kind == StmtKind::Dim && s->name == name;
    if (!declared) {
      diags.error({},
                  "--set " + name + "=" + value + ": no dim or train setting named '" + name + "'");
      continue;
    }
    dimOverrides[name] = value;
  }
  for (const StmtPtr &s : program.stmts) {
    if (s->kind != StmtKind::Dim)
      continue;
    if (dims.isDeclared(s->name)) {
      diags.error(s->nameLoc, "dim '" + s->name + "' is declared twice");
      continue;
    }
    std::optional<int64_t> size;
    auto it = dimOverrides.find(s->name);
    if (it != dimOverrides.end()) {
      int64_t v;
      if (llvm::StringRef(it->second).getAsInteger(10, v) || v <= 0) {
        diags.error({}, "--set " + s->name + "=" + it->second + ": a dim needs a positive integer");
        failedDims_.insert(s->name);
        continue;
      }
      size = v;
    } else {
      if (!s->value)
        continue;
      size = constantInteger(*s->value);
      if (!size) {
        failedDims_.insert(s->name);
        continue;
      }
      if (*size <= 0) {
        diags.error(s->value->loc,
                    "dim '" + s->name + "' must be positive, got " + std::to_string(*size));
        failedDims_.insert(s->name);
        continue;
      }
    }
    if (*size > kMaxElements) {
      diags.error(s->nameLoc, "dim '" + s->name + "' is too large (" + std::to_string(*size) + ")");
      failedDims_.insert(s->name);
      continue;
    }
    dims.set(s->name, *size, s->nameLoc);
  }
}

void Elaborator::statement(const Stmt &s) {
  emit.setLoc(mlirLoc(s.loc));
  switch (s.kind) {
  case StmtKind::Dim:
    return; // declareDims did these
  case StmtKind::Input:
    return declareInput(s);
  case StmtKind::Param:
    return declareParam(s);
  case StmtKind::Assign:
    return assign(s);
  case StmtKind::Fn:
    if (isBuiltinName(s.name)) {
      diags.error(s.nameLoc, "'" + s.name + "' is a built-in function and cannot be redefined");
      return;
    }
    if (!functions_.emplace(s.name, &s).second)
      diags.error(s.nameLoc, "function '" + s.name + "' is defined twice");
    return;
  case StmtKind::For:
    return forLoop(s);
  case StmtKind::Output: {
    if (!s.value)
      return;
    auto t = tensorOf(*s.value, "'output'");
    if (!t)
      return;
    std::string name = s.value->kind == ExprKind::Name ? s.value->text
                                                       : "output" + std::to_string(outputs_.size());
    for (auto &existing : outputs_)
      if (existing.first == name) {
        diags.error(s.value->loc, "output '" + name + "' is declared twice");
        return;
      }
    outputs_.emplace_back(name, *t);
    return;
  }
  case StmtKind::Minimize: {
    if (!s.value)
      return;
    if (loss_) {
      diags.error(s.loc, "a program has one 'minimize' statement; the first is at line " +
                             std::to_string(lossLoc_.line));
      return;
    }
    auto t = floatTensorOf(*s.value, "'minimize'");
    if (!t)
      return;
    if (t->rank() != 0) {
      diags.error(s.value->loc, "'minimize' needs a scalar loss, got " + formatTensor(*t) +
                                    "; reduce it first, e.g. with reduce(x, \"... -> \", mean)");
      return;
    }
    loss_ = t;
    lossLoc_ = s.loc;
    return;
  }
  case StmtKind::Return:
    diags.error(s.loc, "'return' outside a function");
    return;
  case StmtKind::Train:
    return trainSection(s);
  }
}

void Elaborator::assign(const Stmt &s) {
  for (const Target &t : s.targets) {
    if (dims.isDeclared(t.name)) {
      diags.error(t.loc, "cannot assign to '" + t.name + "': it is a dim");
      return;
    }
    if (bufferNames_.count(t.name)) {
      diags.error(t.loc, "cannot assign to '" + t.name +
                             "': it is a buffer, which the model reads and never writes");
      return;
    }
    if (argumentNames_.count(t.name)) {
      diags.error(t.loc, "cannot assign to '" + t.name + "': it is an input or param");
      return;
    }
  }
  std::optional<Value> v;
  if (s.value)
    v = expr(*s.value);
  if (!v) {
    for (const Target &t : s.targets)
      scopes_.back()[t.name] = Value::poison();
    return;
  }
  if (s.targets.size() == 1) {
    scopes_.back()[s.targets.front().name] = *v;
    if (v->isTensor())
      recordLetName(v->tensor.value, s.targets.front().name);
    return;
  }
  // Tuple unpacking splits the first axis: `q, k, v = t` with t: [3, ...]:
  // row i of it as a slice (a view), then a reshape dropping the axis.
  if (!v->isTensor() || v->tensor.rank() == 0 ||
      v->tensor.axes.front().size != static_cast<int64_t>(s.targets.size())) {
    diags.error(s.targets.front().loc,
                "cannot unpack " +
                    (v->isTensor() ? formatTensor(v->tensor) : std::string("a number")) + " into " +
                    std::to_string(s.targets.size()) + " names: its first axis must have size " +
                    std::to_string(s.targets.size()));
    return;
  }
  const Tensor &whole = v->tensor;
  Axes rest(whole.axes.begin() + 1, whole.axes.end());
  for (size_t i = 0; i < s.targets.size(); ++i) {
    Tensor part = emit.reshape(emit.slice(whole, static_cast<int64_t>(i), 1), rest);
    recordLetName(part.value, s.targets[i].name);
    scopes_.back()[s.targets[i].name] = Value::ofTensor(part);
  }
}

void Elaborator::recordLetName(mlir::Value value, const std::string &name) {
  Operation *op = value.getDefiningOp();
  if (!op)
    return; // an argument: nothing computes it
  llvm::SmallVector<Attribute> names;
  if (auto old = op->getAttrOfType<ArrayAttr>("ein.let"))
    names.assign(old.begin(), old.end());
  auto attr = builder_.getStringAttr(name);
  if (!llvm::is_contained(names, attr))
    names.push_back(attr);
  op->setAttr("ein.let", builder_.getArrayAttr(names));
}

void Elaborator::forLoop(const Stmt &s) {
  auto trips = dims.lookup(s.rangeDim);
  if (!trips) {
    diags.error(s.rangeLoc, "for-loop range '" + s.rangeDim + "' is not a dim");
    return;
  }
  if (*trips > kMaxLoopTrips) {
    diags.error(s.rangeLoc, "for-loop over '" + s.rangeDim + "' runs " + std::to_string(*trips) +
                                " times; the limit is " + std::to_string(kMaxLoopTrips));
    return;
  }
  if (dims.isDeclared(s.name)) {
    diags.error(s.nameLoc, "loop variable '" + s.name + "' hides a dim");
    return;
  }
  for (int64_t i = 0; i < *trips; ++i) {
    if (++totalTrips_ > kMaxTotalTrips) {
      diags.error(s.rangeLoc, "loops unroll more than " + std::to_string(kMaxTotalTrips) +
                                  " iterations in all");
      return;
    }
    unsigned before = diags.errorCount();
    loopPrefix_.push_back(s.name + "." + std::to_string(i));
    layerTagger_.layer = llvm::join(loopPrefix_, ".");
    scopes_.back()[s.name] = Value::ofNumber(static_cast<double>(i), true);
    for (const StmtPtr &b : s.body) {
      if (diags.tooMany())
        break;
      statement(*b);
    }
    loopPrefix_.pop_back();
    layerTagger_.layer = llvm::join(loopPrefix_, ".");
    if (diags.errorCount() != before)
      break; // the same error would repeat in every iteration
  }
}

void Elaborator::trainSection(const Stmt &s) {
  if (sawTrain_) {
    diags.error(s.loc, "a program has at most one 'train' section");
    return;
  }
  sawTrain_ = true;
  std::map<std::string, SourceLoc> seen;
  for (const TrainSetting &t : s.settings) {
    if (!seen.emplace(t.key, t.loc).second) {
      diags.error(t.loc, "train setting '" + t.key + "' is given twice");
      continue;
    }
    // The file's value is checked even when --set overrides it (finish()
    // applies the overrides after the section).
    if (trainSetting(*this, t.key, t.loc, t.value.get(), "", train_))
      trainLocs_[t.key] = t.value ? t.value->loc : t.loc;
  }
}

void Elaborator::finish() {
  if (!loss_) {
    diags.error({}, "the program has no 'minimize' statement: say which scalar to train on, "
                    "e.g. 'minimize cross_entropy(logits, targets)'");
    return;
  }
  std::map<std::string, std::string> trainOverrides; // the last --set of a key wins
  for (auto &[k, v] : options_.overrides)
    if (isTrainKey(k))
      trainOverrides[k] = v;
  for (auto &[k, v] : trainOverrides)
    if (trainSetting(*this, k, {}, nullptr, v, train_))
      trainLocs_.erase(k);
  if (diags.hasErrors())
    return;
  std::string key;
  std::string problem = einrt::unsupportedSetting(train_, options_.use, key);
  if (!problem.empty()) {
    auto at = trainLocs_.find(key);
    if (at != trainLocs_.end())
      diags.error(at->second, problem);
    else
      diags.error({}, "--set " + key + "=" + trainOverrides[key] + ": " + problem);
    return;
  }
  if (options_.settings)
    *options_.settings = train_;
  if (diags.hasErrors())
    return;
  // The let names (`ein.let`) are for the `names:` remat policy, which
  // keeps exactly the values they name; otherwise the IR does not carry them.
  if (!llvm::StringRef(train_.remat).starts_with("names:"))
    forward_.walk([](Operation *op) { op->removeAttr("ein.let"); });

  addCrossEntropyOutput();
  emit.setLoc(mlirLoc(lossLoc_));
  llvm::SmallVector<mlir::Value> results{loss_->value};
  for (auto &out : outputs_)
    results.push_back(out.second.value);
  builder_.create<func::ReturnOp>(mlirLoc(lossLoc_), results);

  llvm::SmallVector<Type> argTypes(body_->getArgumentTypes());
  llvm::SmallVector<Type> resultTypes;
  for (mlir::Value v : results)
    resultTypes.push_back(v.getType());
  forward_.setFunctionType(builder_.getFunctionType(argTypes, resultTypes));

  unsigned index = 0;
  for (const std::vector<Argument> *list : {&inputs_, &params_}) {
    for (const Argument &a : *list) {
      llvm::SmallVector<NamedAttribute> attrs{
          builder_.getNamedAttr("ein.name", builder_.getStringAttr(a.name)),
          builder_.getNamedAttr("ein.kind", builder_.getStringAttr(a.isParam ? "param" : "input")),
          builder_.getNamedAttr("ein.axes", emit.axesAttr(a.axes))};
      if (a.isParam)
        attrs.push_back(builder_.getNamedAttr("ein.init", a.init));
      if (a.frozen) // passes/Passes.h, kFrozenParam: no gradient, no optimizer state
        attrs.push_back(builder_.getNamedAttr("ein.frozen", builder_.getUnitAttr()));
      forward_.setArgAttrs(index++, builder_.getDictionaryAttr(attrs));
    }
  }
  forward_.setResultAttrs(0, builder_.getDictionaryAttr({builder_.getNamedAttr(
                                 "ein.name", builder_.getStringAttr("loss"))}));
  for (size_t i = 0; i < outputs_.size(); ++i)
    forward_.setResultAttrs(
        i + 1, builder_.getDictionaryAttr(
                   {builder_.getNamedAttr("ein.name", builder_.getStringAttr(outputs_[i].first)),
                    builder_.getNamedAttr("ein.axes", emit.axesAttr(outputs_[i].second.axes))}));

  llvm::SmallVector<NamedAttribute> dimAttrs;
  for (auto &[name, size] : dims.ordered())
    dimAttrs.push_back(builder_.getNamedAttr(name, builder_.getI64IntegerAttr(size)));
  (*module_)->setAttr("ein.dims", builder_.getDictionaryAttr(dimAttrs));
  (*module_)->setAttr("ein.train", trainAttribute(train_, builder_));
  // Where the file sets each train setting, as debug info on the module:
  // its location becomes fused[FILE:1:1, "clip"(FILE:L:C), ...], and
  // ein-train-step locates the ops a setting creates (clipping, the
  // optimizer's shared scalars) there.
  if (!trainLocs_.empty()) {
    llvm::SmallVector<Location> parts{(*module_)->getLoc()};
    for (auto &[key, loc] : trainLocs_)
      parts.push_back(NameLoc::get(builder_.getStringAttr(key), mlirLoc(loc)));
    (*module_)->setLoc(FusedLoc::get(&context_, parts));
  }
  if (lossPositions_ > 0) // tokens per step, for reports
    (*module_)->setAttr("ein.tokens", builder_.getI64IntegerAttr(lossPositions_));
  // A loss that is more than one cross_entropy (a z-loss or a penalty beside
  // it) is not in nats per token: the trainer prints no bits per byte then.
  if (lossPositions_ > 0 && !crossEntropies_.contains(loss_->value))
    (*module_)->setAttr("ein.loss", builder_.getStringAttr("objective"));

  // The IR is built to verify; a failure here is a bug in einc, reported
  // as such instead of aborting.
  std::string mlirMessage;
  ScopedDiagnosticHandler handler(&context_, [&](mlir::Diagnostic &d) {
    if (mlirMessage.empty())
      mlirMessage = d.str();
    return success();
  });
  if (failed(verify(*module_)))
    diags.error({}, "internal error: the generated IR does not verify: " + mlirMessage);
}

/// An objective with one cross_entropy among its terms (a z-loss beside it)
/// returns that term too, as the output "cross_entropy": the trainer logs it
/// at each evaluation and gives bits per byte from it alone.
void Elaborator::addCrossEntropyOutput() {
  if (crossEntropies_.size() != 1 || crossEntropies_.contains(loss_->value))
    return;
  for (auto &out : outputs_)
    if (out.first == "cross_entropy")
      return;
  mlir::Value term = *crossEntropies_.begin();
  // Only a term of the loss: search the loss's operands back to it.
  llvm::SmallVector<mlir::Value> work{loss_->value};
  llvm::DenseSet<mlir::Value> seen;
  while (!work.empty()) {
    mlir::Value v = work.pop_back_val();
    if (v == term) {
      outputs_.emplace_back("cross_entropy", Tensor{term, {}});
      return;
    }
    if (Operation *def = v.getDefiningOp())
      for (mlir::Value operand : def->getOperands())
        if (seen.insert(operand).second)
          work.push_back(operand);
  }
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

std::optional<Value> Elaborator::lookup(const std::string &name, SourceLoc loc) {
  auto find = [&](std::map<std::string, Value> &scope) -> std::optional<Value> {
    auto it = scope.find(name);
    if (it == scope.end())
      return std::nullopt;
    return it->second;
  };
  std::optional<Value> found = find(scopes_.back());
  if (!found && scopes_.size() > 1)
    found = find(scopes_.front());
  if (found) {
    if (found->isPoison())
      return std::nullopt; // its definition failed and was reported
    return found;
  }
  if (auto size = dims.lookup(name))
    return Value::ofNumber(static_cast<double>(*size), true);
  if (loc.isValid()) {
    if (functions_.count(name) || isBuiltinName(name))
      diags.error(loc, "'" + name + "' is a function; call it with arguments");
    else
      diags.error(loc, "unknown name '" + name + "'");
  }
  return std::nullopt;
}

std::optional<Value> Elaborator::expr(const Expr &e) {
  emit.setLoc(mlirLoc(e.loc));
  switch (e.kind) {
  case ExprKind::Number:
    return Value::ofNumber(e.number, e.isInteger);
  case ExprKind::Name:
    return lookup(e.text, e.loc);
  case ExprKind::String:
    diags.error(e.loc, "a string is only allowed as a pattern or axis argument");
    return std::nullopt;
  case ExprKind::Unary: {
    if (e.args.empty())
      return std::nullopt;
    auto v = expr(*e.args[0]);
    if (!v)
      return std::nullopt;
    if (!v->isTensor())
      return Value::ofNumber(-v->number, v->isInteger);
    if (!isa<FloatType>(v->tensor.elementType())) {
      diags.error(e.loc,
                  "cannot negate " + formatTensor(v->tensor) + ": arithmetic needs a float tensor");
      return std::nullopt;
    }
    emit.setLoc(mlirLoc(e.loc));
    return Value::ofTensor(emit.unary<mlir::ein::NegOp>(v->tensor));
  }
  case ExprKind::Binary: {
    if (e.args.size() != 2)
      return std::nullopt;
    auto lhs = expr(*e.args[0]);
    if (!lhs)
      return std::nullopt;
    auto rhs = expr(*e.args[1]);
    if (!rhs)
      return std::nullopt;
    return binaryOp(binaryOpSpelling(e.op), e.loc, *lhs, *rhs);
  }
  case ExprKind::Call:
    return call(e);
  case ExprKind::Index:
    return index(e);
  case ExprKind::List:
    diags.error(e.loc, "a list of tensors is only allowed as rearrange's first argument");
    return std::nullopt;
  }
  return std::nullopt;
}

std::optional<Tensor> Elaborator::tensorOf(const Expr &e, llvm::StringRef what) {
  auto v = expr(e);
  if (!v)
    return std::nullopt;
  if (!v->isTensor()) {
    diags.error(e.loc, what + " needs a tensor, not a number");
    return std::nullopt;
  }
  // A mask only chooses (where's first argument): no op below the DSL
  // computes on i1.
  if (v->tensor.elementType().isInteger(1)) {
    diags.error(e.loc, what + " cannot take the mask " + formatTensor(v->tensor) +
                           ": a comparison's result is only where's first argument");
    return std::nullopt;
  }
  return v->tensor;
}

std::optional<Tensor> Elaborator::floatTensorOf(const Expr &e, llvm::StringRef what) {
  auto t = tensorOf(e, what);
  if (t && !isa<FloatType>(t->elementType())) {
    diags.error(e.loc, what + " needs a float tensor, got " + formatTensor(*t));
    return std::nullopt;
  }
  return t;
}

std::optional<Value> Elaborator::index(const Expr &e) {
  if (e.args.size() != 2)
    return std::nullopt;
  auto table = tensorOf(*e.args[0], "indexing");
  if (!table)
    return std::nullopt;
  auto ids = tensorOf(*e.args[1], "an index");
  if (!ids)
    return std::nullopt;
  if (table->rank() == 0) {
    diags.error(e.args[0]->loc, "cannot index a scalar " + formatTensor(*table));
    return std::nullopt;
  }
  if (!ids->elementType().isInteger(32)) {
    diags.error(e.args[1]->loc, "indices must be i32, got " + formatTensor(*ids));
    return std::nullopt;
  }
  Axes axes = ids->axes;
  axes.insert(axes.end(), table->axes.begin() + 1, table->axes.end());
  auto count = elementCount(axes);
  if (!count || *count > kMaxElements) {
    diags.error(e.loc, "the lookup result " + formatAxes(axes) + " has too many elements");
    return std::nullopt;
  }
  emit.setLoc(mlirLoc(e.loc));
  return Value::ofTensor(emit.gather(*table, *ids, axes));
}

std::optional<Value> Elaborator::call(const Expr &e) {
  bool handled = false;
  auto result = elaborateBuiltin(*this, e, handled);
  if (handled)
    return result;
  auto fn = functions_.find(e.callee);
  if (fn == functions_.end()) {
    diags.error(e.calleeLoc, "unknown function '" + e.callee + "'");
    std::vector<std::pair<llvm::StringRef, SourceLoc>> fns;
    for (const auto &[name, stmt] : functions_)
      fns.emplace_back(name, stmt->nameLoc);
    if (auto s = suggestFunction(e.callee, fns)) {
      if (s->definedAt.isValid())
        diags.note(s->definedAt, "did you mean '" + s->name + "'?");
      else
        diags.note(SourceLoc{}, "did you mean the built-in '" + s->name + "(" + s->usage + ")'?");
    }
    return std::nullopt;
  }
  return callUser(e, *fn->second);
}

OwningOpRef<ModuleOp> elaborate(const Program &program, const SourceFile &file,
                                DiagnosticEngine &diags, MLIRContext &context,
                                const ElaborateOptions &options) {
  Elaborator elaborator(file, diags, context, options);
  return elaborator.run(program);
}

} // namespace ein::dsl
