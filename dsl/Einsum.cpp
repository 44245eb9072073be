//===- Einsum.cpp - einsum ------------------------------------------------===//
//
// einsum(t1, ..., tN, "pattern"), lowered onto primitive ops: per-operand
// sums, then pairwise contractions in a cheap order, then a transpose into
// the output order.
//
//===----------------------------------------------------------------------===//
#include "dsl/PatternCall.h"
#include "dsl/PatternTypos.h"

#include "llvm/ADT/STLExtras.h"

#include <set>

namespace ein::dsl {

using einops::Elem;
using einops::ellipsisKey;
using einops::PatternCall;

std::optional<Value> elaborateEinsum(Elaborator &E, const Expr &call) {
  if (call.args.size() < 2) {
    E.diags.error(call.calleeLoc, "'einsum' takes one or more tensors and then a pattern, got " +
                                      countOf(call.args.size(), "argument", "arguments"));
    return std::nullopt;
  }
  if (!call.kwargs.empty()) {
    E.diags.error(call.kwargs.front().loc, "'einsum' takes no axis sizes");
    return std::nullopt;
  }
  PatternCall pc(E, call, "einsum");
  size_t n = call.args.size() - 1;
  std::vector<Tensor> tensors;
  for (size_t i = 0; i < n; ++i) {
    auto t = E.floatTensorOf(*call.args[i], "'einsum'");
    if (!t)
      return std::nullopt;
    if (!tensors.empty() && t->elementType() != tensors.front().elementType()) {
      E.diags.error(call.args[i]->loc, "'einsum' operands have different element types: " +
                                           formatTensor(tensors.front()) + " and " +
                                           formatTensor(*t));
      return std::nullopt;
    }
    tensors.push_back(*t);
  }
  if (!pc.parse(*call.args[n]))
    return std::nullopt;
  const Pattern &p = *pc.pattern;
  if (p.inputs.size() != n) {
    E.diags.error(pc.at(0), "the pattern has " + std::to_string(p.inputs.size()) +
                                " inputs but 'einsum' got " + std::to_string(n) + " tensors");
    return std::nullopt;
  }
  auto rejectGroups = [&](const PatternSide &side) {
    for (const PatternAxis &a : side.axes) {
      if (a.kind == PatternAxis::Kind::Group || a.kind == PatternAxis::Kind::Unit ||
          a.kind == PatternAxis::Kind::Number) {
        E.diags.error(pc.at(a.offset), "einsum patterns name single axes: no "
                                       "parentheses and no anonymous axes");
        return false;
      }
    }
    return true;
  };
  for (const PatternSide &s : p.inputs)
    if (!rejectGroups(s))
      return std::nullopt;
  if (!rejectGroups(p.output))
    return std::nullopt;

  struct Operand {
    Tensor t;
    std::vector<std::string> keys;
  };
  std::vector<Operand> operands;
  std::map<std::string, Axis> axisOf; // key → result axis
  std::optional<size_t> ellipsisRank;
  for (size_t i = 0; i < n; ++i) {
    auto elems = pc.bindLeft(p.inputs[i], tensors[i], n == 1 ? 0 : i + 1);
    if (!elems)
      return std::nullopt;
    Operand op{tensors[i], {}};
    size_t ellipsisHere = 0;
    for (const Elem &e : *elems) {
      op.keys.push_back(e.key);
      bool isEllipsis = llvm::StringRef(e.key).starts_with("...");
      ellipsisHere += isEllipsis;
      auto it = axisOf.find(e.key);
      if (isEllipsis && it != axisOf.end() && it->second.name != e.axis.name &&
          E.dims.isDeclared(it->second.name) && E.dims.isDeclared(e.axis.name)) {
        E.diags.error(pc.at(p.inputs[i].offset), "'...' stands for axis '" + it->second.name +
                                                     "' in an earlier operand but for '" +
                                                     e.axis.name +
                                                     "' here: " + formatTensor(tensors[i]));
        return std::nullopt;
      }
      if (it != axisOf.end() && it->second.size != e.axis.size) {
        E.diags.error(pc.at(p.inputs[i].offset),
                      "'...' stands for different axes in different operands: " +
                          formatTensor(tensors[i]));
        return std::nullopt;
      }
      axisOf.emplace(e.key, e.axis);
    }
    bool hasEllipsis = llvm::any_of(p.inputs[i].axes, [](const PatternAxis &a) {
      return a.kind == PatternAxis::Kind::Ellipsis;
    });
    if (hasEllipsis) {
      if (ellipsisRank && *ellipsisRank != ellipsisHere) {
        E.diags.error(pc.at(p.inputs[i].offset),
                      "'...' stands for a different number of axes in different operands");
        return std::nullopt;
      }
      ellipsisRank = ellipsisHere;
    }
    operands.push_back(std::move(op));
  }
  // The output's keys.
  std::vector<std::string> outKeys;
  bool outEllipsis = false;
  for (const PatternAxis &a : p.output.axes) {
    if (a.kind == PatternAxis::Kind::Ellipsis) {
      outEllipsis = true;
      for (size_t i = 0; i < ellipsisRank.value_or(0); ++i)
        outKeys.push_back(ellipsisKey(i));
      if (!ellipsisRank) {
        E.diags.error(pc.at(a.offset), "'...' appears in the output only");
        return std::nullopt;
      }
      continue;
    }
    if (!axisOf.count(a.name)) {
      E.diags.error(pc.at(a.offset), "output axis '" + a.name + "' does not appear in any input");
      noteMisspeltDim(E, a.name);
      return std::nullopt;
    }
    outKeys.push_back(a.name);
  }
  if (ellipsisRank && !outEllipsis) {
    E.diags.error(pc.at(p.output.offset), "'...' appears in the inputs but not in the output");
    return std::nullopt;
  }
  if (!checkNoRenamedLoneSum(E, p, tensors, [&](unsigned offset) { return pc.at(offset); }))
    return std::nullopt;

  E.emit.setLoc(E.mlirLoc(call.calleeLoc));
  auto needed = [&](const std::string &key, size_t skipA, size_t skipB) {
    if (llvm::is_contained(outKeys, key))
      return true;
    for (size_t i = 0; i < operands.size(); ++i)
      if (i != skipA && i != skipB && llvm::is_contained(operands[i].keys, key))
        return true;
    return false;
  };
  // Sum out axes that only one operand has and the output lacks.
  for (size_t i = 0; i < operands.size(); ++i) {
    llvm::SmallVector<int64_t> dims;
    std::vector<std::string> kept;
    for (size_t d = 0; d < operands[i].keys.size(); ++d) {
      if (needed(operands[i].keys[d], i, i))
        kept.push_back(operands[i].keys[d]);
      else
        dims.push_back(d);
    }
    operands[i].t = E.emit.reduce(operands[i].t, mlir::ein::ReduceKind::sum, dims);
    operands[i].keys = kept;
  }
  // Pairwise contractions, cheapest pair first: the cost of contracting a
  // pair is the product of the sizes of all axes either has.
  while (operands.size() > 1) {
    size_t bestA = 0, bestB = 1;
    double bestCost = -1;
    for (size_t a = 0; a < operands.size(); ++a)
      for (size_t b = a + 1; b < operands.size(); ++b) {
        std::set<std::string> all(operands[a].keys.begin(), operands[a].keys.end());
        all.insert(operands[b].keys.begin(), operands[b].keys.end());
        double cost = 1;
        for (const std::string &k : all)
          cost *= static_cast<double>(axisOf[k].size);
        if (bestCost < 0 || cost < bestCost) {
          bestCost = cost;
          bestA = a;
          bestB = b;
        }
      }
    Operand &l = operands[bestA];
    Operand &r = operands[bestB];
    llvm::SmallVector<int64_t> lb, rb, lc, rc;
    std::vector<std::string> batchKeys, lFree, rFree;
    for (size_t i = 0; i < l.keys.size(); ++i) {
      auto it = llvm::find(r.keys, l.keys[i]);
      if (it == r.keys.end()) {
        lFree.push_back(l.keys[i]);
        continue;
      }
      int64_t j = it - r.keys.begin();
      if (needed(l.keys[i], bestA, bestB)) {
        lb.push_back(i);
        rb.push_back(j);
        batchKeys.push_back(l.keys[i]);
      } else {
        lc.push_back(i);
        rc.push_back(j);
      }
    }
    for (const std::string &k : r.keys)
      if (!llvm::is_contained(l.keys, k))
        rFree.push_back(k);
    std::vector<std::string> keys = batchKeys;
    keys.insert(keys.end(), lFree.begin(), lFree.end());
    keys.insert(keys.end(), rFree.begin(), rFree.end());
    Axes axes;
    for (const std::string &k : keys)
      axes.push_back(axisOf[k]);
    auto count = elementCount(axes);
    if (!count || *count > kMaxElements) {
      E.diags.error(call.calleeLoc, "an intermediate of this einsum, " + formatAxes(axes) +
                                        ", has too many elements");
      return std::nullopt;
    }
    Operand result{E.emit.contract(l.t, r.t, lb, rb, lc, rc, axes), keys};
    operands.erase(operands.begin() + bestB);
    operands.erase(operands.begin() + bestA);
    operands.push_back(std::move(result));
  }
  Operand &last = operands.front();
  llvm::SmallVector<int64_t> perm;
  for (const std::string &k : outKeys)
    perm.push_back(llvm::find(last.keys, k) - last.keys.begin());
  return Value::ofTensor(E.emit.transpose(last.t, perm));
}

} // namespace ein::dsl
