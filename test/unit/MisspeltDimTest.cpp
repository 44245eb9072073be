//===- MisspeltDimTest.cpp - typo distance and misspelt dims --------------===//
//
// The thresholds of the misspelt-dim rule (docs/language.md section 4): which
// local pattern names count as a dim's misspelling and which never do.
//
//===----------------------------------------------------------------------===//

#include "dsl/Shape.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <string>
#include <vector>

using namespace ein::dsl;

namespace {

TEST(TypoDistance, CountsEditsAndAdjacentSwaps) {
  EXPECT_EQ(typoDistance("hidden", "hidden"), 0u);
  EXPECT_EQ(typoDistance("hidden", "hiddn"), 1u);   // deletion
  EXPECT_EQ(typoDistance("hidden", "hiddenn"), 1u); // insertion
  EXPECT_EQ(typoDistance("hidden", "hidfen"), 1u);  // substitution
  EXPECT_EQ(typoDistance("hidden", "hdiden"), 1u);  // adjacent swap
  EXPECT_EQ(typoDistance("batch", "bacth"), 1u);
  EXPECT_EQ(typoDistance("batch", "hctab"), 4u);
  EXPECT_EQ(typoDistance("", "abc"), 3u);
  EXPECT_EQ(typoDistance("abc", ""), 3u);
  EXPECT_EQ(typoDistance("ca", "abc"), 3u); // a swap is not edited again
}

TEST(TypoDistance, StopsPastTheLimit) {
  EXPECT_EQ(typoDistance("hidden", "hiddn", 1), 1u);
  EXPECT_EQ(typoDistance("hidden", "batch", 1), 2u);
  EXPECT_EQ(typoDistance("abcdefgh", "hgfedcba", 2), 3u);
  EXPECT_EQ(typoDistance("abcdefgh", "abcdefgh", 0), 0u);
  EXPECT_EQ(typoDistance("abcdefgh", "abcdefhg", 0), 1u);
  EXPECT_EQ(typoDistance("abcdefgh", "xbcdefgy", 2), 2u);
}

DimTable table(std::initializer_list<const char *> names) {
  DimTable dims;
  int64_t size = 2;
  for (const char *name : names)
    dims.set(name, size++);
  return dims;
}

TEST(MisspeltDim, FindsTheDimANameIsOneTypoFrom) {
  DimTable dims = table({"batch", "hidden", "classes", "seq"});
  EXPECT_EQ(dims.misspeltDim("hiddn"), "hidden");
  EXPECT_EQ(dims.misspeltDim("hdiden"), "hidden");
  EXPECT_EQ(dims.misspeltDim("Batch"), "batch");
  EXPECT_EQ(dims.misspeltDim("clases"), "classes");
  EXPECT_EQ(dims.misspeltDim("sqe"), "seq");
  // A dim is no misspelling of itself.
  EXPECT_EQ(dims.misspeltDim("hidden"), std::nullopt);
  EXPECT_EQ(dims.misspeltDim("k"), std::nullopt);
}

TEST(MisspeltDim, ShortNamesAreNeverTypos) {
  DimTable dims = table({"d", "e", "k", "hd", "seq"});
  EXPECT_EQ(dims.misspeltDim("j"), std::nullopt);
  EXPECT_EQ(dims.misspeltDim("h"), std::nullopt);
  EXPECT_EQ(dims.misspeltDim("dd"), std::nullopt);
  EXPECT_EQ(dims.misspeltDim("sq"), std::nullopt);
  EXPECT_EQ(dims.misspeltDim("hdd"), std::nullopt);
}

TEST(MisspeltDim, LongNamesAllowTwoEdits) {
  DimTable dims = table({"hidden", "embedding"});
  EXPECT_EQ(dims.misspeltDim("hiden"), "hidden");
  EXPECT_EQ(dims.misspeltDim("hidn"), std::nullopt); // 2 edits, 4 letters
  EXPECT_EQ(dims.misspeltDim("embeding"), "embedding");
  EXPECT_EQ(dims.misspeltDim("enbeding"), "embedding"); // 2 edits
  EXPECT_EQ(dims.misspeltDim("embedng"), std::nullopt); // 2 edits, 7 letters
  EXPECT_EQ(dims.misspeltDim("embed"), std::nullopt);
}

TEST(MisspeltDim, TrailingDigitsMarkADeliberateName) {
  DimTable dims = table({"hidden", "layer1"});
  EXPECT_EQ(dims.misspeltDim("hidden2"), std::nullopt);
  EXPECT_EQ(dims.misspeltDim("hidden_2"), std::nullopt);
  EXPECT_EQ(dims.misspeltDim("layer2"), std::nullopt);
  EXPECT_EQ(dims.misspeltDim("h1dden"), "hidden");
}

TEST(MisspeltDim, ClosestDimWinsAndTiesGoToTheFirstDeclared) {
  DimTable dims = table({"heads", "head", "cat", "car"});
  EXPECT_EQ(dims.misspeltDim("haeds"), "heads"); // 1 from heads, 2 from head
  EXPECT_EQ(dims.misspeltDim("cab"), "cat");
}

TEST(MisspeltDim, VeryLongNamesAreNotCompared) {
  std::string dim(100, 'x');
  DimTable dims;
  dims.set(dim, 2);
  std::string name = dim;
  name.back() = 'y';
  EXPECT_EQ(dims.misspeltDim(name), std::nullopt);
}

TEST(MisspeltDim, CraftedProgramsExhaustABudgetInsteadOfTakingMinutes) {
  // Permutations of one set of letters pass the character-set filter, so
  // every pair needs the distance: 3,000 x 3,000 of them would be 9 M.
  std::string letters = "abcdefgh";
  std::vector<std::string> perms;
  do
    perms.push_back(letters);
  while (std::next_permutation(letters.begin(), letters.end()) && perms.size() < 6000);
  DimTable dims;
  dims.set("hidden", 8);
  for (size_t i = 0; i < 3000; ++i)
    dims.set(perms[i], 2);
  EXPECT_EQ(dims.misspeltDim("hiddn"), "hidden");
  for (size_t i = 3000; i < 6000; ++i)
    dims.misspeltDim(perms[i]);
  EXPECT_EQ(dims.misspeltDim("hiddn"), "hidden");     // answered before: cached
  EXPECT_EQ(dims.misspeltDim("hiden"), std::nullopt); // past the budget
}

TEST(MisspeltDim, RemembersWhereADimIsDeclared) {
  DimTable dims;
  dims.set("hidden", 8, SourceLoc{3, 5});
  dims.set("hidden", 16); // --set keeps the declaration's place
  EXPECT_EQ(dims.declaredAt("hidden").line, 3u);
  EXPECT_EQ(dims.declaredAt("hidden").col, 5u);
  EXPECT_FALSE(dims.declaredAt("batch").isValid());
}

} // namespace
