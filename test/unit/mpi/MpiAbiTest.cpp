//===- MpiAbiTest.cpp - runtime/dist/MpiAbi.h against Open MPI's mpi.h ---------===//
#include "runtime/dist/MpiAbi.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <mpi.h>

using namespace einrt;

TEST(MpiAbi, ConstantsAreOpenMpis) {
  EXPECT_EQ(mpi_abi::kSuccess, MPI_SUCCESS);
  EXPECT_EQ(mpi_abi::kThreadSerialized, MPI_THREAD_SERIALIZED);
  EXPECT_GE(mpi_abi::kMaxErrorString, MPI_MAX_ERROR_STRING);
  EXPECT_GE(mpi_abi::kMaxVersionString, MPI_MAX_LIBRARY_VERSION_STRING);
  EXPECT_EQ(reinterpret_cast<void *>(mpi_abi::kInPlace), static_cast<void *>(MPI_IN_PLACE));
  EXPECT_EQ(sizeof(MPI_Comm), sizeof(void *));
  EXPECT_EQ(sizeof(MPI_Datatype), sizeof(void *));
  EXPECT_EQ(sizeof(MPI_Request), sizeof(void *));
}

TEST(MpiAbi, HandlesAreTheGlobalsDlsymFinds) {
  void *self = dlopen(nullptr, RTLD_NOW);
  ASSERT_NE(self, nullptr);
  EXPECT_EQ(dlsym(self, mpi_abi::kCommWorld), static_cast<void *>(MPI_COMM_WORLD));
  EXPECT_EQ(dlsym(self, mpi_abi::kByte), static_cast<void *>(MPI_BYTE));
  EXPECT_EQ(dlsym(self, mpi_abi::kFloat), static_cast<void *>(MPI_FLOAT));
  EXPECT_EQ(dlsym(self, mpi_abi::kSum), static_cast<void *>(MPI_SUM));
  EXPECT_EQ(dlsym(self, mpi_abi::kErrorsReturn), static_cast<void *>(MPI_ERRORS_RETURN));
}
