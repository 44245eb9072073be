//===- Sections.h - The parts of the HTML report page -----------*- C++ -*-===//
//
// printReportHtml (ReportHtml.cpp) writes the page from these, one file
// each: the verdict cards (Cards.cpp), the roofline of the kernels
// (RooflineChart.cpp), memory over the step (MemoryChart.cpp), the remat
// frontier (RematChart.cpp), step time by phase, kind and layer
// (StepTime.cpp), and the kernel table (KernelTable.cpp). Every chart's
// labels go through Svg::text (SvgText.h).
//
//===----------------------------------------------------------------------===//
#ifndef EINC_TOOLS_DRIVER_HTML_SECTIONS_H
#define EINC_TOOLS_DRIVER_HTML_SECTIONS_H

#include "tools/driver/Report.h"

#include "llvm/Support/raw_ostream.h"

#include <string>

namespace einc::html {

/// The colour of a phase (forward, backward, recompute, optimizer,
/// communication) in every chart and legend.
const char *phaseColor(llvm::StringRef phase);
/// The light band of a phase behind the memory chart.
const char *phaseBand(llvm::StringRef phase);
/// A legend entry: a colour swatch and its name.
std::string swatch(const char *color, llvm::StringRef name);
/// `path` as the page prints a source: relative to the model's directory
/// when it lies under it, else its file name ("gpt.ein:31:9").
std::string shortSource(const Report &r, llvm::StringRef path);

void verdictCards(const Report &r, llvm::raw_ostream &os);
void rooflineChart(const Report &r, llvm::raw_ostream &os);
void memoryChart(const Report &r, llvm::raw_ostream &os);
void rematChart(const Report &r, llvm::raw_ostream &os);
void stepTime(const Report &r, llvm::raw_ostream &os);
void kernelTable(const Report &r, llvm::raw_ostream &os);

} // namespace einc::html

#endif // EINC_TOOLS_DRIVER_HTML_SECTIONS_H
