//===- SvgText.cpp - Measured, unclipped SVG labels ------------------------===//
#include "SvgText.h"

#include "tools/driver/Report.h"

#include "llvm/Support/ConvertUTF.h"

#include <algorithm>
#include <iterator>

namespace einc::html {
namespace {

struct CodeWidth {
  uint32_t code;
  int width;
};
#include "FontMetrics.inc"

struct Metrics {
  int unitsPerEm, widest;
  const int *ascii;
  const CodeWidth *other, *otherEnd;

  int advance(uint32_t c) const {
    if (c >= 32 && c < 127)
      return ascii[c - 32];
    for (const CodeWidth *w = other; w != otherEnd; ++w)
      if (w->code == c)
        return w->width;
    return widest;
  }
};

const Metrics kRegular{kRegularUnitsPerEm, kRegularWidest, kRegularAscii, std::begin(kRegularOther),
                       std::end(kRegularOther)};
const Metrics kBold{kBoldUnitsPerEm, kBoldWidest, kBoldAscii, std::begin(kBoldOther),
                    std::end(kBoldOther)};

constexpr double kMargin = 2;

} // namespace

std::string escape(llvm::StringRef s) {
  std::string out;
  for (char c : s) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

std::string num(double v) { return fixed(v, 1); }

double textWidth(llvm::StringRef text, double px, bool bold) {
  const Metrics &m = bold ? kBold : kRegular;
  int64_t units = 0;
  const char *p = text.begin();
  while (p < text.end()) {
    llvm::UTF32 c = 0;
    const llvm::UTF8 *from = reinterpret_cast<const llvm::UTF8 *>(p);
    llvm::UTF32 *to = &c;
    if (llvm::ConvertUTF8toUTF32(&from, reinterpret_cast<const llvm::UTF8 *>(text.end()), &to,
                                 to + 1, llvm::lenientConversion) == llvm::sourceExhausted ||
        from == reinterpret_cast<const llvm::UTF8 *>(p)) {
      ++p; // a broken sequence: one widest glyph per byte
      units += m.widest;
      continue;
    }
    p = reinterpret_cast<const char *>(from);
    units += m.advance(c);
  }
  return double(units) * px / m.unitsPerEm;
}

const char *anchorName(Anchor a) {
  return a == Anchor::Middle ? "middle" : a == Anchor::End ? "end" : "start";
}

Box textBox(llvm::StringRef text, double x, double baseline, Anchor anchor, double px, bool bold) {
  double w = textWidth(text, px, bold);
  double x0 = anchor == Anchor::Start ? x : anchor == Anchor::Middle ? x - w / 2 : x - w;
  return Box{x0, baseline - kAscent * px, x0 + w, baseline + kDescent * px};
}

Svg::Svg(llvm::raw_ostream &os, double width, double height)
    : os(os), width_(width), height_(height) {
  os << "<svg width=\"" << num(width) << "\" height=\"" << num(height) << "\" viewBox=\"0 0 "
     << num(width) << " " << num(height) << "\" role=\"img\">\n";
}

void Svg::close() {
  if (open_)
    os << "</svg>";
  open_ = false;
}

Box Svg::text(double x, double baseline, llvm::StringRef label, const Label &style) {
  // A label wider than the svg loses its end (whole characters) to an ellipsis.
  std::string text = label.str();
  double room = width_ - 2 * kMargin;
  if (textWidth(text, style.px, style.bold) > room) {
    while (!text.empty() && textWidth(text + "…", style.px, style.bold) > room) {
      text.pop_back();
      while (!text.empty() && (uint8_t(text.back()) & 0xC0) == 0x80) // a continuation byte
        text.pop_back();
      if (!text.empty() && uint8_t(text.back()) >= 0xC0) // a lead byte left alone
        text.pop_back();
    }
    text += "…";
  }
  Box b = textBox(text, x, baseline, style.anchor, style.px, style.bold);
  double dx = 0, dy = 0;
  if (b.x1 > width_ - kMargin)
    dx = width_ - kMargin - b.x1;
  if (b.x0 + dx < kMargin)
    dx = kMargin - b.x0;
  if (b.y1 > height_ - kMargin)
    dy = height_ - kMargin - b.y1;
  if (b.y0 + dy < kMargin)
    dy = kMargin - b.y0;
  os << "<text x=\"" << num(x + dx) << "\" y=\"" << num(baseline + dy) << "\"";
  if (style.anchor != Anchor::Start)
    os << " text-anchor=\"" << anchorName(style.anchor) << "\"";
  // Inline style: the page's `svg text` rule would override presentation
  // attributes.
  std::string css;
  if (style.fill)
    css += std::string("fill:") + style.fill + ";";
  if (style.bold)
    css += "font-weight:bold;";
  if (style.px != kFontPx)
    css += "font-size:" + num(style.px) + "px;";
  if (!css.empty())
    os << " style=\"" << css << "\"";
  os << ">" << escape(text) << "</text>\n";
  return Box{b.x0 + dx, b.y0 + dy, b.x1 + dx, b.y1 + dy};
}

} // namespace einc::html
