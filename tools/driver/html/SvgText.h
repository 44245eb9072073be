//===- SvgText.h - Labels of the HTML report's charts, measured -*- C++ -*-===//
//
// The report's SVG charts write every label through Svg::text, which
// measures it with the advance widths of the font the page's CSS names
// first for SVG text (DejaVu Sans, FontMetrics.inc) and moves it the least
// needed to lie inside the chart: no label is clipped at an edge. The same
// measure is what test/unit/tools/ReportHtmlTest.cpp holds every <text> of
// a page against.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_TOOLS_DRIVER_HTML_SVGTEXT_H
#define EINC_TOOLS_DRIVER_HTML_SVGTEXT_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace einc::html {

/// The charts' label size, px (the CSS of `svg text`).
constexpr double kFontPx = 11;
/// DejaVu Sans' ascent and descent, in ems (its hhea table).
constexpr double kAscent = 0.928, kDescent = 0.236;

/// `s` with & < > " escaped for HTML text and attributes.
std::string escape(llvm::StringRef s);
/// A coordinate: one decimal.
std::string num(double v);

/// The advance width of UTF-8 `text` in DejaVu Sans (Bold) at `px`; a
/// character outside the table counts as the font's widest glyph.
double textWidth(llvm::StringRef text, double px = kFontPx, bool bold = false);

enum class Anchor { Start, Middle, End };
const char *anchorName(Anchor a); // "start", "middle", "end"

struct Box {
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  bool within(const Box &outer) const {
    return x0 >= outer.x0 && y0 >= outer.y0 && x1 <= outer.x1 && y1 <= outer.y1;
  }
};

/// The box a one-line label drawn at (x, baseline) with `anchor` covers.
Box textBox(llvm::StringRef text, double x, double baseline, Anchor anchor, double px = kFontPx,
            bool bold = false);

/// The style of one label.
struct Label {
  Anchor anchor = Anchor::Start;
  const char *fill = nullptr; // a CSS colour; null: the page's text colour
  bool bold = false;
  double px = kFontPx;
};

/// One <svg> of `width` × `height` (its viewBox) written to `os`.
class Svg {
public:
  Svg(llvm::raw_ostream &os, double width, double height);
  /// Closes the <svg>.
  void close();

  /// A label at (x, baseline), moved the least needed to lie inside the
  /// svg (a 2 px margin): returns where it went.
  Box text(double x, double baseline, llvm::StringRef text, const Label &style = {});

  double width() const { return width_; }
  double height() const { return height_; }
  llvm::raw_ostream &os;

private:
  double width_, height_;
  bool open_ = true;
};

} // namespace einc::html

#endif // EINC_TOOLS_DRIVER_HTML_SVGTEXT_H
