//===- StrictJsonTest.cpp - Strict reading and one way of writing JSON ----===//
#include "runtime/base/StrictJson.h"

#include <gtest/gtest.h>

using namespace einrt;
using nlohmann::json;

namespace {

std::string errorOf(const std::string &text) {
  Expected<json> j = parseStrictJson(text.data(), text.size());
  EXPECT_FALSE(j.ok()) << text;
  EXPECT_EQ(j.status().code(), StatusCode::Invalid) << text;
  // checkStrictJson refuses it with the same message, building nothing.
  Status checked = checkStrictJson(text.data(), text.size());
  EXPECT_EQ(checked.code(), StatusCode::Invalid) << text;
  EXPECT_EQ(checked.message(), j.status().message()) << text;
  return j.status().message();
}

bool checks(const std::string &text) {
  Status checked = checkStrictJson(text.data(), text.size());
  EXPECT_TRUE(checked.ok()) << text << ": " << checked.message();
  return checked.ok();
}

TEST(StrictJson, ParsesAndKeepsTheTopLevelOrder) {
  std::string text = " {\"b\": [1, -2, 2.5, \"x\\u00e9\", true, null], \"a\": {\"c\": {}}} ";
  std::vector<std::string> keys;
  Expected<json> parsed = parseStrictJson(text.data(), text.size(), &keys);
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  json j = parsed.take();
  EXPECT_EQ(keys, (std::vector<std::string>{"b", "a"}));
  EXPECT_EQ(j["b"][3], "x\xC3\xA9");
  EXPECT_EQ(j["b"][1], -2);
  EXPECT_TRUE(j["a"]["c"].is_object());
  EXPECT_TRUE(checks(text));
  // The same key in sibling objects, or in an object and its parent, is no
  // duplicate.
  EXPECT_TRUE(checks("{\"a\": {\"a\": 1}, \"b\": [{\"a\": 1}, {\"a\": 2}]}"));
}

TEST(StrictJson, RejectsWhatRfc8259AndThePolicyRule) {
  EXPECT_NE(errorOf("{\"a\":1,\"a\":2}").find("duplicate key \"a\""), std::string::npos);
  EXPECT_NE(errorOf("[{\"k\":{\"x\":1,\"x\":1}}]").find("duplicate key"), std::string::npos);
  EXPECT_NE(errorOf("{\"a\":1} x").find("invalid JSON at byte"), std::string::npos);
  EXPECT_NE(errorOf("{\"a\":1,}"), "");
  EXPECT_NE(errorOf("[01]"), "");
  EXPECT_NE(errorOf("// c\n{}"), "");
  EXPECT_NE(errorOf("[\"\xC0\xAF\"]").find("UTF-8"), std::string::npos);
  EXPECT_NE(errorOf("[\"\\udc00\"]").find("surrogate"), std::string::npos);
  EXPECT_NE(errorOf(std::string("[\"a\0b\"]", 7)), "");
  EXPECT_NE(errorOf(""), "");
  EXPECT_NE(errorOf("[1e999]").find("number overflow"), std::string::npos);
}

TEST(StrictJson, NestingIsLimited) {
  auto nested = [](int depth) {
    return std::string(size_t(depth), '[') + "1" + std::string(size_t(depth), ']');
  };
  std::string ok = nested(kMaxJsonDepth);
  Expected<json> j = parseStrictJson(ok.data(), ok.size());
  EXPECT_TRUE(j.ok()) << j.status().message();
  EXPECT_TRUE(checks(ok));
  EXPECT_NE(errorOf(nested(kMaxJsonDepth + 1)).find("nesting deeper than 64"), std::string::npos);
  // Hostile depth stops at the limit, not after reading a million brackets.
  EXPECT_NE(errorOf(std::string(1000000, '[')).find("nesting"), std::string::npos);
}

TEST(StrictJson, MessagesQuoteNoInput) {
  // nlohmann's "last read: '...'" would repeat the (possibly huge) token.
  std::string huge = "[\"" + std::string(100000, 'x');
  std::string error = errorOf(huge);
  EXPECT_NE(error.find("invalid JSON at byte"), std::string::npos) << error;
  EXPECT_LT(error.size(), 300u) << error;
  EXPECT_EQ(error.find("xxxx"), std::string::npos) << error;
  error = errorOf("[tru]");
  EXPECT_EQ(error.find("tru"), std::string::npos) << error;
  EXPECT_NE(error.find("invalid literal"), std::string::npos) << error;
}

TEST(StrictJson, IndicesAreNonNegativeIntegerLiterals) {
  auto index = [](const std::string &text, int64_t &v) {
    Expected<json> j = parseStrictJson(text.data(), text.size());
    return j.ok() && jsonToIndex(*j, v);
  };
  int64_t v = -1;
  EXPECT_TRUE(index("0", v));
  EXPECT_EQ(v, 0);
  EXPECT_TRUE(index("9223372036854775807", v));
  EXPECT_EQ(v, INT64_MAX);
  EXPECT_FALSE(index("9223372036854775808", v));
  EXPECT_FALSE(index("99999999999999999999", v));
  EXPECT_FALSE(index("-0", v));
  EXPECT_FALSE(index("-1", v));
  EXPECT_FALSE(index("2.0", v));
  EXPECT_FALSE(index("2e0", v));
  EXPECT_FALSE(index("\"2\"", v));
}

TEST(StrictJson, Utf8Validity) {
  EXPECT_TRUE(validUtf8(""));
  EXPECT_TRUE(validUtf8("plain \" \\ \n"));
  EXPECT_TRUE(validUtf8("\xC3\xA9 \xF0\x9F\x98\x80 \xEF\xBF\xBD"));
  EXPECT_FALSE(validUtf8("\xFF"));
  EXPECT_FALSE(validUtf8("\xC3"));
  EXPECT_FALSE(validUtf8("\xED\xA0\x80")); // a surrogate
  EXPECT_FALSE(validUtf8("\xEF\xBF\xBD\xC0\xAF"));
}

TEST(StrictJson, NumbersAreWrittenExactlyInTheFewestDigits) {
  auto text = [](double v) { return dumpJson(jsonNumber(v)); };
  EXPECT_EQ(text(1000), "1000");
  EXPECT_EQ(text(-0.0), "0");
  EXPECT_EQ(text(8e10), "80000000000");
  EXPECT_EQ(text(0.1), "0.1");
  EXPECT_EQ(text(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(text(double(0.1f)), "0.10000000149011612");
  EXPECT_EQ(text(1e300), "1e+300");
  EXPECT_EQ(text(NAN), "null");
  EXPECT_EQ(text(INFINITY), "null");
  for (double v : {0.1, 1.0 / 3, 6.02214076e23, 5e-324, 1.7976931348623157e308}) {
    json back = json::parse(text(v));
    EXPECT_EQ(back.get<double>(), v) << text(v);
  }
  // Invalid UTF-8 in a string is replaced, never an exception.
  EXPECT_EQ(dumpJson(nlohmann::ordered_json("a\xFF")), "\"a\xEF\xBF\xBD\"");
}

} // namespace
