//===- FieldsDocumentTest.cpp - Documents written from fields visitors ----===//
//
// runtime/base/FieldsJson.h's JsonForm::Document (the report's JSON, the
// device check's): every member in the visitor's order, numbers as
// jsonNumber, and the document-only members of Fields.h.
//
//===----------------------------------------------------------------------===//
#include "runtime/base/FieldsJson.h"

#include <gtest/gtest.h>

#include <limits>

namespace {

struct Inner {
  int64_t count = 0;
  double seconds = 0;
  template <class Self, class Visit> static void fields(Self &self, Visit &&visit) {
    visit("count", self.count);
    visit("seconds", self.seconds);
  }
};

struct Outer {
  std::string name;
  bool flag = false;
  double rate = 0, tail = 0, flat = 0;
  std::optional<Inner> inner;     // left out when absent
  std::optional<std::string> via; // null when absent
  std::vector<Inner> list;
  std::vector<std::pair<std::string, int64_t>> ranked; // an object in this order
  int64_t a = 0, b = 0;

  template <class Self, class Visit> static void fields(Self &self, Visit &&visit) {
    visit("name", self.name);
    visit("rates", einrt::group([&](auto &&v) {
            v("rate", self.rate);
            v("tail", self.tail);
            v("flat", self.flat);
          }));
    visit("flag", self.flag);
    visit("mode", einrt::computed(self.flag ? "on" : "off"));
    visit("inner", self.inner);
    visit("via", einrt::orNull(self.via));
    visit("list", self.list);
    visit("ranked", self.ranked);
    visit("sum", einrt::computed(self.a + self.b));
    visit("only_when_a", einrt::computed(self.a ? std::optional(self.a) : std::nullopt));
  }
};

std::string document(const Outer &o) {
  einrt::BasicFieldsWriter<nlohmann::ordered_json> writer(einrt::JsonForm::Document);
  return writer.write(o).dump();
}

TEST(FieldsDocument, EveryMemberInItsOrderWithDefaults) {
  Outer o; // defaults are written too (a document shows every figure)
  EXPECT_EQ(document(o),
            R"({"name":"","rates":{"rate":0,"tail":0,"flat":0},"flag":false,"mode":"off",)"
            R"("via":null,"list":[],"ranked":{},"sum":0})");
}

TEST(FieldsDocument, NumbersComputedAndNested) {
  Outer o;
  o.name = "x";
  o.rate = 2.5;
  o.tail = std::numeric_limits<double>::infinity(); // JSON has none: null
  o.flat = 3.0;                                     // an integer when exactly one
  o.flag = true;
  o.inner = Inner{7, 0.125};
  o.via = "nvlink";
  o.list = {Inner{1, 1e-6}};
  o.ranked = {{"zeta", 3}, {"alpha", 1}};
  o.a = 4;
  o.b = 5;
  EXPECT_EQ(document(o),
            R"({"name":"x","rates":{"rate":2.5,"tail":null,"flat":3},"flag":true,"mode":"on",)"
            R"("inner":{"count":7,"seconds":0.125},"via":"nvlink",)"
            R"("list":[{"count":1,"seconds":1e-06}],"ranked":{"zeta":3,"alpha":1},)"
            R"("sum":9,"only_when_a":4})");
}

TEST(FieldsDocument, ProgramFileFormIsUnchanged) {
  // The program file's form leaves defaults out and keeps doubles exact.
  Inner i{0, std::numeric_limits<double>::infinity()};
  einrt::SectionWriter sections;
  einrt::FieldsWriter writer(sections);
  EXPECT_EQ(writer.write(i).dump(), R"({"seconds":"inf"})");
}

} // namespace
