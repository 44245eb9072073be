//===- SampleBundle.h - Hand-built bundles and file surgery, for tests -*- C++ -*-===//
#ifndef EINC_TEST_UNIT_BUNDLE_SAMPLEBUNDLE_H
#define EINC_TEST_UNIT_BUNDLE_SAMPLEBUNDLE_H

#include "runtime/io/ModelBundle.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace einrt::test {

/// A valid CPU-backend Program with one step of every kind in
/// runtime/core/StepKinds.def (each payload type with every member set), buffers
/// of every dtype and role, constants holding NaN, infinities, -0 and a
/// subnormal, and params with every kind of initialiser.
Program everyKindProgram();

/// Settings with every field of the table set to a value other than its
/// default (and so every key given).
TrainSettings nonDefaultSettings();

/// A bundle holding everyKindProgram() (cpu), a small reference program,
/// two kernel objects, the settings above, dims, a source with bytes that
/// are not UTF-8, and a report.
ModelBundle sampleBundle();

/// The parts of a format-1 file (docs/program-file.md), split here
/// independently of the reader.
struct FileParts {
  uint32_t version = 0;
  std::string writer;
  std::string header; // the JSON text, padding included
  std::vector<uint8_t> data;
};
FileParts splitFile(const std::vector<uint8_t> &file);
/// The file of `parts`, laid out as the writer does, with a valid checksum.
std::vector<uint8_t> joinFile(const FileParts &parts);
/// Recomputes the last four bytes (the CRC-32C of the rest).
void fixChecksum(std::vector<uint8_t> &file);
/// `file` with its header parsed, edited by `edit` and written back (a
/// valid checksum, the data untouched).
std::vector<uint8_t> editHeader(const std::vector<uint8_t> &file,
                                const std::function<void(nlohmann::json &)> &edit);

} // namespace einrt::test

#endif // EINC_TEST_UNIT_BUNDLE_SAMPLEBUNDLE_H
