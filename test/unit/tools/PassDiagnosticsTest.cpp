//===- PassDiagnosticsTest.cpp - MLIR's diagnostics as the front end's ----===//
//
// tools/driver/PassDiagnostics.h: an error at any location an op can carry
// prints as `file:line:col: error:`, the source line and a caret, or on one
// line where it names no line of the model file.
//
//===----------------------------------------------------------------------===//
#include "tools/driver/PassDiagnostics.h"

#include "dsl/Elaborator.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"

#include <gtest/gtest.h>

#include <string>

using namespace mlir;

namespace {

struct PassDiagnosticsTest : ::testing::Test {
  MLIRContext context;
  ein::dsl::SourceFile file{"m\x1b.ein", "dim d = 4\ninput x: f32[d]\nminimize reduce(x, \"d ->\", "
                                         "sum)\ntrain {\n  remat = \"budget:60%\"\n}\n"};
  std::string printed;
  llvm::raw_string_ostream os{printed};

  Location at(unsigned line, unsigned col) {
    return FileLineColLoc::get(&context, file.path(), line, col);
  }
  std::string errorAt(Location loc, const char *message = "it failed") {
    printed.clear();
    {
      einc::PassDiagnostics diagnostics(context, file, os);
      emitError(loc) << message;
    }
    return os.str();
  }
};

TEST_F(PassDiagnosticsTest, AFileLocationHasItsLineAndCaret) {
  EXPECT_EQ(errorAt(at(5, 11)), "m\\x1b.ein:5:11: error: it failed\n"
                                "  remat = \"budget:60%\"\n"
                                "          ^\n");
}

TEST_F(PassDiagnosticsTest, FusedNamedAndCallSiteLocationsAreUnwrapped) {
  std::string want = "m\\x1b.ein:3:10: error: it failed\n"
                     "minimize reduce(x, \"d ->\", sum)\n"
                     "         ^\n";
  Location named = NameLoc::get(StringAttr::get(&context, "layer.0"), at(3, 10));
  EXPECT_EQ(errorAt(named), want);
  EXPECT_EQ(errorAt(FusedLoc::get(&context, {UnknownLoc::get(&context), named, at(2, 1)})), want);
  EXPECT_EQ(errorAt(CallSiteLoc::get(at(3, 10), at(2, 7))), want); // the callee: the op itself
}

TEST_F(PassDiagnosticsTest, NoLineOfTheFileIsOneLine) {
  EXPECT_EQ(errorAt(UnknownLoc::get(&context)), "m\\x1b.ein: error: it failed\n");
  EXPECT_EQ(errorAt(FileLineColLoc::get(&context, "other.ein", 2, 3)),
            "m\\x1b.ein: error: it failed\n");
  // The module and its functions are at the whole file; with a `train { }`
  // section the module's place is fused with where each setting is.
  Location whole = ein::dsl::wholeFileLocation(context, file);
  EXPECT_EQ(errorAt(whole), "m\\x1b.ein: error: it failed\n");
  Location module =
      FusedLoc::get(&context, {whole, NameLoc::get(StringAttr::get(&context, "remat"), at(5, 11))});
  EXPECT_EQ(errorAt(module), "m\\x1b.ein: error: it failed\n");
}

TEST_F(PassDiagnosticsTest, MessagesAreTerminalSafeAndNotesFollow) {
  printed.clear();
  {
    einc::PassDiagnostics diagnostics(context, file, os);
    InFlightDiagnostic d = emitError(at(2, 7)) << "bad\x1b[2J\nname";
    d.attachNote(at(1, 5)) << "declared here";
  }
  EXPECT_EQ(os.str(), "m\\x1b.ein:2:7: error: bad\\x1b[2J\\x0aname\n"
                      "input x: f32[d]\n"
                      "      ^\n"
                      "m\\x1b.ein:1:5: note: declared here\n"
                      "dim d = 4\n"
                      "    ^\n");
}

} // namespace
