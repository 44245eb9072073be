//===- MpiAbi.h - What einc assumes of Open MPI's ABI ----------*- C++ -*-===//
//
// MpiCommunicator.cpp loads libmpi with dlopen and never includes mpi.h;
// these are the values and names it takes from Open MPI's mpi.h instead.
// test/unit/mpi/MpiAbiTest.cpp checks each against mpi.h where it is
// installed.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_MPIABI_H
#define EINC_RUNTIME_MPIABI_H

namespace einrt::mpi_abi {

constexpr int kSuccess = 0;            // MPI_SUCCESS
constexpr int kThreadSerialized = 2;   // MPI_THREAD_SERIALIZED
constexpr int kMaxErrorString = 256;   // >= MPI_MAX_ERROR_STRING
constexpr int kMaxVersionString = 256; // >= MPI_MAX_LIBRARY_VERSION_STRING
constexpr long kInPlace = 1;           // MPI_IN_PLACE is ((void *) 1)
// The predefined handles are the addresses of these globals.
constexpr const char *kCommWorld = "ompi_mpi_comm_world";
constexpr const char *kByte = "ompi_mpi_byte";
constexpr const char *kFloat = "ompi_mpi_float";
constexpr const char *kSum = "ompi_mpi_op_sum";
constexpr const char *kErrorsReturn = "ompi_mpi_errors_return";

} // namespace einrt::mpi_abi

#endif // EINC_RUNTIME_MPIABI_H
