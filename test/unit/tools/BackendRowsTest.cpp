//===- BackendRowsTest.cpp - The compiler has a row for every backend -----===//
//
// The registry (runtime/core/Backend.h) names a lowering and a kernel
// section per backend; the compiler finds both by name
// (codegen/Lowerings.h). A backend registered without its compiler rows
// would be refused at every compile: caught here instead.
//
//===----------------------------------------------------------------------===//
#include "codegen/Lowerings.h"
#include "runtime/core/Backend.h"

#include <gtest/gtest.h>

TEST(BackendRows, EveryBackendHasItsLoweringAndSection) {
  for (const einrt::Backend *b : einrt::backends()) {
    const ein::codegen::ProgramLowering *lowering =
        ein::codegen::findProgramLowering(b->programLowering());
    ASSERT_NE(lowering, nullptr) << b->name();
    // Host kernels and kernel sections are rendered from a kernel table.
    if (b->hostKernels() || *b->kernelSection())
      EXPECT_TRUE(lowering->kernels) << b->name();
    if (*b->kernelSection())
      EXPECT_NE(ein::codegen::findKernelSection(b->kernelSection()), nullptr) << b->name();
  }
  // And no compiler row without a backend that uses it.
  for (const ein::codegen::ProgramLowering &l : ein::codegen::programLowerings()) {
    bool used = false;
    for (const einrt::Backend *b : einrt::backends())
      used |= std::string(l.name) == b->programLowering();
    EXPECT_TRUE(used) << l.name;
  }
  for (const ein::codegen::KernelSectionRenderer &r : ein::codegen::kernelSections())
    EXPECT_NE(einrt::backendOfSection(r.name), nullptr) << r.name;
}
