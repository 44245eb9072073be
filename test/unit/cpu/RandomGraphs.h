//===- RandomGraphs.h - Seeded random elementwise graphs, for tests -*- C++ -*-===//
//
// The functions FusionRandomTest runs through fusion and the CPU lowering
// (and KernelObjectTest compiles to object code): elementwise ops over one
// shape, with every kind of broadcast operand (scalar, leading rows,
// trailing bias, a middle dim), iotas (through reshapes and broadcasts),
// reductions whose results come back through
// broadcasts, cmp / select, casts, reshapes and a contraction, ops tagged
// with random phases, values returned from the middle of chains.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_TEST_UNIT_CPU_RANDOMGRAPHS_H
#define EINC_TEST_UNIT_CPU_RANDOMGRAPHS_H

#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace einc::cputest {

inline constexpr const char *kFull = "tensor<4x6x8xf32>";

/// A random function @f: values of shape 4x6x8 built from the arguments.
inline std::string randomFunction(unsigned seed, int ops) {
  std::mt19937 gen(seed);
  auto pick = [&](int n) { return int(gen() % unsigned(n)); };
  std::ostringstream body;
  std::vector<std::string> full = {"%x", "%y"};
  int next = 0;
  auto fresh = [&] { return "%v" + std::to_string(next++); };
  auto phase = [&] {
    static const char *phases[] = {"forward", "backward", "optimizer"};
    return std::string(" {ein.phase = \"") + phases[pick(3)] + "\"}";
  };
  // An f32 iota of the full shape, directly or through reshapes and
  // broadcasts (kernels compute most from the element index; the last
  // splits the iota's dims and is materialised).
  auto index = [&]() -> std::string {
    std::string a = fresh(), b = fresh();
    switch (pick(6)) {
    case 0:
      body << "  " << a << " = ein.iota dim " << pick(3) << " : " << kFull << "\n";
      return a;
    case 1: // rows of 8: element i is i / 8 % 24
      body << "  " << a << " = ein.iota dim 0 : tensor<24x8xf32>\n";
      body << "  " << b << " = ein.reshape " << a << " : tensor<24x8xf32> -> " << kFull << "\n";
      return b;
    case 2: // a trailing block
      body << "  " << a << " = ein.iota dim 0 : tensor<8xf32>\n";
      body << "  " << b << " = ein.broadcast " << a << " dims [2] : tensor<8xf32> -> " << kFull
           << "\n";
      return b;
    case 3: // a middle dim
      body << "  " << a << " = ein.iota dim 0 : tensor<6xf32>\n";
      body << "  " << b << " = ein.broadcast " << a << " dims [1] : tensor<6xf32> -> " << kFull
           << "\n";
      return b;
    case 4: { // leading dims of a reshaped iota
      std::string c = fresh();
      body << "  " << a << " = ein.iota dim 0 : tensor<24xf32>\n";
      body << "  " << b << " = ein.reshape " << a << " : tensor<24xf32> -> tensor<4x6xf32>\n";
      body << "  " << c << " = ein.broadcast " << b << " dims [0, 1] : tensor<4x6xf32> -> " << kFull
           << "\n";
      return c;
    }
    default: { // dims 0 and 2 of a 4x8 index running over both: materialised
      std::string c = fresh();
      body << "  " << a << " = ein.iota dim 0 : tensor<32xf32>\n";
      body << "  " << b << " = ein.reshape " << a << " : tensor<32xf32> -> tensor<4x8xf32>\n";
      body << "  " << c << " = ein.broadcast " << b << " dims [0, 2] : tensor<4x8xf32> -> " << kFull
           << "\n";
      return c;
    }
    }
  };
  // An operand: a full value, a broadcast of a smaller one, or an iota.
  auto operand = [&]() -> std::string {
    int k = pick(9);
    if (k == 8)
      return index();
    if (k >= 4)
      return full[size_t(pick(int(full.size())))];
    std::string b = fresh();
    static const char *sources[] = {"%row dims [0, 1] : tensor<4x6xf32>",
                                    "%bias dims [2] : tensor<8xf32>", "%s dims [] : tensor<f32>",
                                    "%mid dims [1] : tensor<6xf32>"};
    body << "  " << b << " = ein.broadcast " << sources[k] << " -> " << kFull << "\n";
    return b;
  };
  for (int i = 0; i < ops; ++i) {
    std::string v = fresh();
    int k = pick(12);
    if (k < 5) {
      static const char *bin[] = {"add", "sub", "mul", "max", "min"};
      std::string a = operand(), b = operand();
      body << "  " << v << " = ein." << bin[k] << " " << a << ", " << b << phase() << " : " << kFull
           << "\n";
    } else if (k < 7) {
      static const char *un[] = {"tanh", "neg"};
      std::string a = operand();
      body << "  " << v << " = ein." << un[k - 5] << " " << a << phase() << " : " << kFull << "\n";
    } else if (k == 7) { // cmp + select
      std::string c = fresh(), a = operand(), b = operand(), d = operand();
      body << "  " << c << " = ein.cmp lt, " << a << ", " << b << " : " << kFull
           << " -> tensor<4x6x8xi1>\n";
      body << "  " << v << " = ein.select " << c << ", " << a << ", " << d
           << " : tensor<4x6x8xi1>, " << kFull << "\n";
    } else if (k == 8) { // a row statistic read back by a later op
      std::string r = fresh(), rb = fresh(), a = operand();
      body << "  " << r << " = ein.reduce " << (pick(2) ? "sum" : "max") << " " << a
           << " dims [2] : " << kFull << " -> tensor<4x6xf32>\n";
      body << "  " << rb << " = ein.broadcast " << r << " dims [0, 1] : tensor<4x6xf32> -> "
           << kFull << "\n";
      body << "  " << v << " = ein.sub " << full.back() << ", " << rb << " : " << kFull << "\n";
    } else if (k == 9) { // through a reshape and back
      std::string r = fresh(), e = fresh(), a = operand();
      body << "  " << r << " = ein.reshape " << a << " : " << kFull << " -> tensor<24x8xf32>\n";
      body << "  " << e << " = ein.tanh " << r << " : tensor<24x8xf32>\n";
      body << "  " << v << " = ein.reshape " << e << " : tensor<24x8xf32> -> " << kFull << "\n";
    } else if (k == 10) { // a contraction in between
      std::string a = operand();
      body << "  " << v << " = ein.contract " << a
           << ", %w batch [], [] contract [2], [0] : " << kFull << ", tensor<8x8xf32> -> " << kFull
           << "\n";
    } else { // f32 -> i32 -> f32
      std::string c = fresh(), a = operand();
      body << "  " << c << " = ein.cast " << a << " : " << kFull << " -> tensor<4x6x8xi32>\n";
      body << "  " << v << " = ein.cast " << c << " : tensor<4x6x8xi32> -> " << kFull << "\n";
    }
    full.push_back(v);
  }
  // The last value and two from the middle are results.
  std::string r0 = full.back(), r1 = full[full.size() / 2], r2 = full[full.size() / 3];
  std::ostringstream fn;
  fn << "func.func @f(%x: " << kFull << ", %y: " << kFull
     << ", %row: tensor<4x6xf32>, %bias: tensor<8xf32>, %s: tensor<f32>, %mid: tensor<6xf32>, "
        "%w: tensor<8x8xf32>) -> ("
     << kFull << ", " << kFull << ", " << kFull << ") {\n"
     << body.str() << "  return " << r0 << ", " << r1 << ", " << r2 << " : " << kFull << ", "
     << kFull << ", " << kFull << "\n}\n";
  return fn.str();
}

} // namespace einc::cputest

#endif // EINC_TEST_UNIT_CPU_RANDOMGRAPHS_H
