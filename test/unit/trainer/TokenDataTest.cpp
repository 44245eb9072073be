//===- TokenDataTest.cpp - Token files, windows, the sampler --------------===//
#include "runtime/io/TokenData.h"
#include "TrainerTestUtil.h"
#include "runtime/ProgramBuilder.h"

#include <gtest/gtest.h>

using namespace einrt;
using namespace einrt::test;

namespace {

std::vector<uint16_t> iotaTokens(size_t n, uint16_t mod = 60000) {
  std::vector<uint16_t> t(n);
  for (size_t i = 0; i < n; ++i)
    t[i] = uint16_t(i % mod);
  return t;
}

WindowLayout layout(WindowMapping m, int64_t batch, int64_t context) {
  WindowLayout l;
  l.mapping = m;
  l.batch = batch;
  l.context = context;
  return l;
}

TEST(TokenFile, RawUint16LittleEndian) {
  TempDir d;
  writeBytes(d.file("a.bin"), tokenBytes({1, 258, 65535, 0}));
  auto f = TokenFile::open(d.file("a.bin"));
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->format(), TokenFile::Format::Raw);
  ASSERT_EQ(f->size(), 4);
  EXPECT_EQ(f->token(0), 1);
  EXPECT_EQ(f->token(1), 258);
  EXPECT_EQ(f->token(2), 65535);
  EXPECT_EQ(f->byteOffset(2), 4);
  // Moving keeps the mapping valid.
  TokenFile g = std::move(*f);
  EXPECT_EQ(g.token(1), 258);
}

TEST(TokenFile, LlmcHeaderRecognised) {
  TempDir d;
  writeBytes(d.file("a.bin"), tokenBytes({5, 6, 7}, /*llmc=*/true));
  auto f = TokenFile::open(d.file("a.bin"));
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->format(), TokenFile::Format::LlmC);
  ASSERT_EQ(f->size(), 3);
  EXPECT_EQ(f->token(0), 5);
  EXPECT_EQ(f->token(2), 7);
  EXPECT_EQ(f->byteOffset(0), 1024);
}

TEST(TokenFile, OddByteCountIsAnError) {
  TempDir d;
  auto bytes = tokenBytes({1, 2, 3});
  bytes.push_back(9);
  writeBytes(d.file("odd.bin"), bytes);
  std::string error;
  error = failureOf(TokenFile::open(d.file("odd.bin")), StatusCode::Corrupt);
  EXPECT_NE(error.find(d.file("odd.bin")), std::string::npos) << error;
  EXPECT_NE(error.find("odd byte count (7 bytes)"), std::string::npos) << error;
  EXPECT_NE(error.find("offset 6"), std::string::npos) << error;
}

TEST(TokenFile, LlmcOddBodyIsAnError) {
  TempDir d;
  auto bytes = tokenBytes({1, 2}, true);
  bytes.push_back(0);
  writeBytes(d.file("odd.bin"), bytes);
  std::string error;
  error = failureOf(TokenFile::open(d.file("odd.bin")), StatusCode::Corrupt);
  EXPECT_NE(error.find("odd byte count"), std::string::npos) << error;
}

TEST(TokenFile, LlmcCountMismatchIsAnError) {
  TempDir d;
  writeBytes(d.file("h.bin"), tokenBytes({1, 2, 3}, true, 1, 10));
  std::string error;
  error = failureOf(TokenFile::open(d.file("h.bin")), StatusCode::Corrupt);
  EXPECT_NE(error.find(d.file("h.bin")), std::string::npos) << error;
  EXPECT_NE(error.find("header[2]"), std::string::npos) << error;
  EXPECT_NE(error.find("is 10 but the file holds 3 tokens"), std::string::npos) << error;
}

TEST(TokenFile, LlmcOtherVersionIsAnError) {
  TempDir d;
  writeBytes(d.file("v.bin"), tokenBytes({1, 2}, true, 2));
  std::string error;
  error = failureOf(TokenFile::open(d.file("v.bin")), StatusCode::Invalid);
  EXPECT_NE(error.find("version 2"), std::string::npos) << error;
}

TEST(TokenFile, LlmcTruncatedHeaderIsAnError) {
  TempDir d;
  auto bytes = tokenBytes({}, true);
  bytes.resize(100);
  writeBytes(d.file("t.bin"), bytes);
  std::string error;
  error = failureOf(TokenFile::open(d.file("t.bin")), StatusCode::Corrupt);
  EXPECT_NE(error.find("shorter than its 1024-byte header"), std::string::npos) << error;
}

TEST(TokenFile, MissingFileIsAnError) {
  std::string error;
  error = failureOf(TokenFile::open("/nonexistent/x.bin"), StatusCode::NotFound);
  EXPECT_NE(error.find("/nonexistent/x.bin"), std::string::npos);
}

TEST(TokenFile, EmptyFileOpensWithNoTokens) {
  TempDir d;
  writeBytes(d.file("e.bin"), {});
  std::string error;
  auto f = TokenFile::open(d.file("e.bin"));
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->size(), 0);
  error = failureOf(WindowSampler::create(*f, layout(WindowMapping::NextToken, 1, 1), 0, 0),
                    StatusCode::Invalid);
}

TEST(TokenFile, ReadChecksVocabularyAndNamesPosition) {
  TempDir d;
  writeBytes(d.file("v.bin"), tokenBytes({1, 2, 300, 4}));
  std::string error;
  auto f = TokenFile::open(d.file("v.bin")); // no check at open
  ASSERT_TRUE(f.ok()) << f.status().message();
  int32_t out[4];
  EXPECT_TRUE(f->read(0, 2, 256, out).ok());
  error = failureOf(f->read(0, 4, 256, out), StatusCode::Invalid);
  EXPECT_NE(error.find(d.file("v.bin")), std::string::npos) << error;
  EXPECT_NE(error.find("token 2 (byte offset 4) is 300"), std::string::npos) << error;
  EXPECT_NE(error.find("vocabulary size 256"), std::string::npos) << error;
  error = failureOf(f->read(2, 5, 0, out), StatusCode::Invalid); // out of range
}

TEST(TokenFile, LlmcPositionIncludesHeader) {
  TempDir d;
  writeBytes(d.file("v.bin"), tokenBytes({1, 999}, true));
  std::string error;
  auto f = TokenFile::open(d.file("v.bin"));
  ASSERT_TRUE(f.ok()) << f.status().message();
  int32_t out[2];
  error = failureOf(f->read(0, 2, 256, out), StatusCode::Invalid);
  EXPECT_NE(error.find("token 1 (byte offset 1026) is 999"), std::string::npos) << error;
}

TEST(WindowSampler, TooShortForOneWindow) {
  TempDir d;
  writeBytes(d.file("s.bin"), tokenBytes(iotaTokens(8)));
  std::string error;
  auto f = TokenFile::open(d.file("s.bin"));
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(WindowSampler::create(*f, layout(WindowMapping::NextToken, 4, 7), 1, 0)
                  .ok()); // exactly one window
  error = failureOf(WindowSampler::create(*f, layout(WindowMapping::NextToken, 4, 8), 1, 0),
                    StatusCode::Invalid);
  EXPECT_NE(error.find(d.file("s.bin")), std::string::npos) << error;
  EXPECT_NE(error.find("8 tokens, too short for one window of 9 tokens"), std::string::npos)
      << error;
}

TEST(WindowSampler, NextTokenRowsAreWindowsAndTheTokenAfter) {
  TempDir d;
  writeBytes(d.file("t.bin"), tokenBytes(iotaTokens(5000)));
  auto f = TokenFile::open(d.file("t.bin"));
  auto s = WindowSampler::create(*f, layout(WindowMapping::NextToken, 16, 5), 3, 0);
  ASSERT_TRUE(s.ok()) << s.status().message();
  std::vector<int32_t> ctx, tgt;
  ASSERT_TRUE(s->next(ctx, tgt).ok());
  ASSERT_EQ(ctx.size(), 80u);
  ASSERT_EQ(tgt.size(), 16u);
  for (int r = 0; r < 16; ++r) {
    for (int c = 1; c < 5; ++c)
      EXPECT_EQ(ctx[r * 5 + c], ctx[r * 5] + c);
    EXPECT_EQ(tgt[r], ctx[r * 5] + 5);
    EXPECT_LE(ctx[r * 5] + 5, 4999);
  }
  EXPECT_EQ(s->drawn(), 16u);
}

TEST(WindowSampler, ShiftedTargetsAreTheWindowShiftedByOne) {
  TempDir d;
  writeBytes(d.file("t.bin"), tokenBytes(iotaTokens(5000)));
  auto f = TokenFile::open(d.file("t.bin"));
  auto s = WindowSampler::create(*f, layout(WindowMapping::Shifted, 8, 6), 3, 0);
  ASSERT_TRUE(s.ok()) << s.status().message();
  std::vector<int32_t> ctx, tgt;
  ASSERT_TRUE(s->next(ctx, tgt).ok());
  ASSERT_EQ(tgt.size(), 48u);
  for (int i = 0; i < 48; ++i)
    EXPECT_EQ(tgt[i], ctx[i] + 1);
}

TEST(WindowSampler, StartsCoverTheWholeFileIncludingTheLastWindow) {
  TempDir d;
  writeBytes(d.file("t.bin"), tokenBytes(iotaTokens(10)));
  auto f = TokenFile::open(d.file("t.bin"));
  auto s = WindowSampler::create(*f, layout(WindowMapping::NextToken, 64, 3), 9, 0);
  ASSERT_TRUE(s.ok());
  std::vector<int32_t> ctx, tgt;
  std::vector<int> seen(10, 0);
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(s->next(ctx, tgt).ok());
    for (int r = 0; r < 64; ++r)
      seen[size_t(ctx[size_t(r) * 3])]++;
  }
  for (int start = 0; start <= 6; ++start)
    EXPECT_GT(seen[size_t(start)], 0) << start;
  for (int start = 7; start < 10; ++start)
    EXPECT_EQ(seen[size_t(start)], 0) << start;
}

TEST(WindowSampler, SameSeedSameWindowsOtherSeedOthers) {
  TempDir d;
  writeBytes(d.file("t.bin"), tokenBytes(iotaTokens(100000)));
  auto f = TokenFile::open(d.file("t.bin"));
  auto l = layout(WindowMapping::Shifted, 4, 8);
  auto a = WindowSampler::create(*f, l, 42, 0);
  auto b = WindowSampler::create(*f, l, 42, 0);
  auto c = WindowSampler::create(*f, l, 43, 0);
  std::vector<int32_t> ca, ta, cb, tb, cc, tc;
  ASSERT_TRUE(a->next(ca, ta).ok() && b->next(cb, tb).ok() && c->next(cc, tc).ok());
  EXPECT_EQ(ca, cb);
  EXPECT_EQ(ta, tb);
  EXPECT_NE(ca, cc);
}

TEST(WindowSampler, SaveAndRestoreState) {
  TempDir d;
  writeBytes(d.file("t.bin"), tokenBytes(iotaTokens(100000)));
  std::string error;
  auto f = TokenFile::open(d.file("t.bin"));
  auto l = layout(WindowMapping::NextToken, 4, 8);
  auto a = WindowSampler::create(*f, l, 5, 0);
  std::vector<int32_t> c, t, c1, t1, c2, t2;
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(a->next(c, t).ok());
  std::string state = a->saveState();
  EXPECT_EQ(state.rfind("rows:12;rng:", 0), 0u) << state;
  ASSERT_TRUE(a->next(c1, t1).ok());
  auto b = WindowSampler::create(*f, l, 999, 0);
  ASSERT_TRUE(b->restoreState(state).ok());
  ASSERT_TRUE(b->next(c2, t2).ok());
  EXPECT_EQ(c1, c2);
  EXPECT_EQ(t1, t2);
  EXPECT_EQ(b->drawn(), 16u);
  error = failureOf(b->restoreState("rows:x;rng:00"), StatusCode::Corrupt);
  error = failureOf(b->restoreState("garbage"), StatusCode::Corrupt);
  // Rewind: back to the first batch.
  a->rewind();
  std::vector<int32_t> c0, t0;
  ASSERT_TRUE(a->next(c0, t0).ok());
  auto fresh = WindowSampler::create(*f, l, 5, 0);
  ASSERT_TRUE(fresh->next(c, t).ok());
  EXPECT_EQ(c0, c);
}

TEST(WindowSampler, MicroBatchesDrawTheLargeBatchsWindows) {
  TempDir d;
  writeBytes(d.file("t.bin"), tokenBytes(iotaTokens(100000)));
  auto f = TokenFile::open(d.file("t.bin"));
  auto big = WindowSampler::create(*f, layout(WindowMapping::Shifted, 8, 4), 7, 0);
  auto small = WindowSampler::create(*f, layout(WindowMapping::Shifted, 2, 4), 7, 0);
  std::vector<int32_t> cb, tb;
  ASSERT_TRUE(big->next(cb, tb).ok());
  std::vector<int32_t> all;
  for (int k = 0; k < 4; ++k) {
    std::vector<int32_t> c, t;
    ASSERT_TRUE(small->next(c, t).ok());
    all.insert(all.end(), c.begin(), c.end());
  }
  EXPECT_EQ(all, cb);
}

TEST(WindowSampler, BadTokenIsFoundAtCreate) {
  TempDir d;
  std::vector<uint16_t> tokens(6, 1);
  tokens[3] = 4000;
  writeBytes(d.file("bad.bin"), tokenBytes(tokens));
  std::string error;
  auto f = TokenFile::open(d.file("bad.bin"));
  ASSERT_TRUE(f.ok()) << f.status().message();
  error = failureOf(WindowSampler::create(*f, layout(WindowMapping::NextToken, 1, 5), 1, 256),
                    StatusCode::Invalid);
  EXPECT_NE(error.find(d.file("bad.bin") + ": token 3 (byte offset 6) is 4000"), std::string::npos)
      << error;
  // vocab 0: unchecked.
  EXPECT_TRUE(WindowSampler::create(*f, layout(WindowMapping::NextToken, 1, 5), 1, 0).ok());
}

TEST(TokenFile, CheckVocabularyFindsTheFirstBadIdInAnyBlock) {
  // Bad ids at a block's first and last position, and in the last, partial
  // block; the first one is named.
  TempDir d;
  for (size_t at : {size_t(0), size_t(16383), size_t(16384), size_t(40000)}) {
    std::vector<uint16_t> tokens(40001, 255);
    tokens[at] = 256;
    if (at + 7 < tokens.size())
      tokens[at + 7] = 65535;
    writeBytes(d.file("v.bin"), tokenBytes(tokens));
    std::string error;
    auto f = TokenFile::open(d.file("v.bin"));
    ASSERT_TRUE(f.ok()) << f.status().message();
    error = failureOf(f->checkVocabulary(256), StatusCode::Invalid);
    EXPECT_NE(error.find(": token " + std::to_string(at) + " (byte offset " +
                         std::to_string(2 * at) + ") is 256,"),
              std::string::npos)
        << error;
    EXPECT_TRUE(f->checkVocabulary(65536).ok());
  }
  writeBytes(d.file("ok.bin"), tokenBytes(std::vector<uint16_t>(40001, 255)));
  std::string error;
  auto f = TokenFile::open(d.file("ok.bin"));
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_TRUE(f->checkVocabulary(256).ok());
}

TEST(WindowLayout, FromProgramArguments) {
  ProgramBuilder b;
  b.p.name = "forward";
  b.arg(DType::I32, {4, 8}, "tokens");
  b.arg(DType::I32, {4}, "targets");
  std::string error;
  auto l = windowLayout(b.p, WindowMapping::NextToken);
  ASSERT_TRUE(l.ok()) << l.status().message();
  EXPECT_EQ(l->batch, 4);
  EXPECT_EQ(l->context, 8);
  EXPECT_EQ(l->span(), 9);
  EXPECT_EQ(l->targetsPerBatch(), 4);
  EXPECT_EQ(*inferWindowMapping(b.p), WindowMapping::NextToken);
  error = failureOf(windowLayout(b.p, WindowMapping::Shifted), StatusCode::Invalid);
  EXPECT_NE(error.find("do not fit the shifted mapping"), std::string::npos) << error;

  ProgramBuilder s;
  s.arg(DType::I32, {2, 16}, "idx");
  s.arg(DType::I32, {2, 16}, "targets");
  l = windowLayout(s.p, WindowMapping::Shifted);
  ASSERT_TRUE(l.ok()) << l.status().message();
  EXPECT_EQ(l->targetsPerBatch(), 32);
  EXPECT_EQ(*inferWindowMapping(s.p), WindowMapping::Shifted);

  ProgramBuilder f;
  f.p.name = "grad";
  f.arg(DType::F32, {2, 16}, "x");
  f.arg(DType::I32, {2}, "targets");
  error = failureOf(windowLayout(f.p, WindowMapping::NextToken), StatusCode::Invalid);
  EXPECT_NE(error.find("input 'x' is f32"), std::string::npos) << error;

  ProgramBuilder one;
  one.arg(DType::I32, {2, 16}, "idx");
  error = failureOf(windowLayout(one.p, WindowMapping::NextToken), StatusCode::Invalid);
  EXPECT_NE(error.find("takes 1 inputs"), std::string::npos) << error;
}

TEST(WindowMapping, Names) {
  EXPECT_EQ(parseWindowMapping("next_token"), WindowMapping::NextToken);
  EXPECT_EQ(parseWindowMapping("shifted"), WindowMapping::Shifted);
  EXPECT_FALSE(parseWindowMapping("shift"));
  EXPECT_STREQ(windowMappingName(WindowMapping::Shifted), "shifted");
}

TEST(RngState, HexRoundTrip) {
  Rng r(77);
  r.normal(); // leaves a spare
  Rng::State st = r.state();
  std::string hex = rngStateToHex(st);
  Rng::State back;
  ASSERT_TRUE(rngStateFromHex(hex, back));
  Rng q;
  q.setState(back);
  EXPECT_EQ(q.normal(), r.normal());
  EXPECT_EQ(q.next(), r.next());
  EXPECT_FALSE(rngStateFromHex(hex.substr(1), back));
  EXPECT_FALSE(rngStateFromHex(std::string(83, 'z'), back));
}

} // namespace
