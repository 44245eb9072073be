//===- TrainEntryLoc.cpp - Where the model file sets a train setting ------===//
#include "passes/TrainEntryLoc.h"

namespace mlir::ein {

Location trainEntryLoc(ModuleOp module, StringRef key, Location fallback) {
  if (auto fused = dyn_cast<FusedLoc>(module.getLoc()))
    for (Location part : fused.getLocations())
      if (auto named = dyn_cast<NameLoc>(part))
        if (named.getName() == key)
          return named.getChildLoc();
  return fallback;
}

} // namespace mlir::ein
