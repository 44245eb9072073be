//===- ParserTest.cpp - Statements, expressions, recovery -----------------===//

#include "TestUtil.h"

#include "dsl/ASTPrinter.h"

#include "llvm/Support/MemoryBuffer.h"

#include "gtest/gtest.h"

using namespace ein::dsl;
using namespace ein::dsl::test;

namespace {

/// Parses `x = TEXT` and returns the rhs in prefix form.
std::string exprOf(const std::string &text) {
  Parsed p = parse("x = " + text + "\n");
  EXPECT_FALSE(p.diags->hasErrors()) << p.printed();
  if (p.program->stmts.size() != 1)
    return "<no stmt>";
  return sexpr(p.program->stmts[0]->value.get());
}

std::string readExample(const char *name) {
  auto buffer = llvm::MemoryBuffer::getFile(std::string(EINC_SOURCE_DIR) + "/examples/" + name);
  if (!buffer)
    return "";
  return (*buffer)->getBuffer().str();
}

//===--- The two DESIGN.md examples ---------------------------------------===//

TEST(ParserTest, MlpLmExampleParses) {
  std::string text = readExample("mlp_lm.ein");
  ASSERT_FALSE(text.empty()) << "examples/mlp_lm.ein missing";
  Parsed p = parse(text);
  EXPECT_EQ(p.diags->errorCount(), 0u) << p.printed();
  const auto &s = p.program->stmts;
  ASSERT_EQ(s.size(), 16u);
  EXPECT_EQ(s[0]->kind, StmtKind::Dim);
  EXPECT_EQ(s[0]->name, "batch");
  EXPECT_EQ(s[0]->value->number, 256);

  // input tokens : i32[batch, window]
  const Stmt &tokens = *s[5];
  EXPECT_EQ(tokens.kind, StmtKind::Input);
  EXPECT_EQ(tokens.name, "tokens");
  EXPECT_EQ(tokens.dtype, "i32");
  EXPECT_EQ(tokens.dtypeLoc.col, 16u);
  ASSERT_EQ(tokens.shape.size(), 2u);
  EXPECT_EQ(tokens.shape[1].name, "window");
  EXPECT_EQ(tokens.shape[1].loc.line, 8u);
  EXPECT_EQ(tokens.shape[1].loc.col, 27u);

  // param w1 : [(window embed), hidden] ~ normal(std=1/sqrt(window*embed), clip=3)
  const Stmt &w1 = *s[8];
  EXPECT_EQ(w1.kind, StmtKind::Param);
  EXPECT_EQ(w1.dtype, "");
  ASSERT_EQ(w1.shape.size(), 2u);
  EXPECT_EQ(w1.shape[0].kind, AxisSpec::Kind::Group);
  ASSERT_EQ(w1.shape[0].members.size(), 2u);
  EXPECT_EQ(w1.shape[0].members[1].name, "embed");
  EXPECT_EQ(sexpr(w1.value.get()), "(call normal std=(/ 1 (call sqrt (* window embed))) clip=3)");
  EXPECT_EQ(sexpr(s[9]->value.get()), "zeros");

  EXPECT_EQ(sexpr(s[11]->value.get()),
            "(call rearrange (index wte tokens) \"batch window embed -> batch "
            "(window embed)\")");
  EXPECT_EQ(s[14]->kind, StmtKind::Output);
  EXPECT_EQ(s[15]->kind, StmtKind::Minimize);
  EXPECT_EQ(sexpr(s[15]->value.get()), "(call cross_entropy logits targets)");
}

TEST(ParserTest, GptExampleParses) {
  std::string text = readExample("gpt.ein");
  ASSERT_FALSE(text.empty()) << "examples/gpt.ein missing";
  Parsed p = parse(text);
  EXPECT_EQ(p.diags->errorCount(), 0u) << p.printed();
  const auto &s = p.program->stmts;
  ASSERT_EQ(s.size(), 20u);
  EXPECT_EQ(sexpr(s[5]->value.get()), "(/ d heads)");

  const Stmt &fn = *s[12];
  ASSERT_EQ(fn.kind, StmtKind::Fn);
  EXPECT_EQ(fn.name, "layernorm");
  ASSERT_EQ(fn.params.size(), 3u);
  EXPECT_EQ(fn.params[0].name, "x");
  EXPECT_EQ(fn.params[0].shape[0].kind, AxisSpec::Kind::Ellipsis);
  ASSERT_EQ(fn.resultShape.size(), 2u);
  ASSERT_EQ(fn.body.size(), 4u);
  EXPECT_EQ(fn.body[3]->kind, StmtKind::Return);
  EXPECT_EQ(sexpr(fn.body[3]->value.get()), "(+ (* (* xc (call rsqrt (+ var 1e-5))) g) b)");

  const Stmt &loop = *s[14];
  ASSERT_EQ(loop.kind, StmtKind::For);
  EXPECT_EQ(loop.name, "layer");
  EXPECT_EQ(loop.rangeDim, "layers");
  EXPECT_EQ(loop.rangeLoc.col, 14u);
  ASSERT_EQ(loop.body.size(), 16u);
  const Stmt &wqkv = *loop.body[2];
  ASSERT_EQ(wqkv.shape.size(), 2u);
  ASSERT_EQ(wqkv.shape[1].members.size(), 3u);
  EXPECT_EQ(wqkv.shape[1].members[0].kind, AxisSpec::Kind::Number);
  EXPECT_EQ(wqkv.shape[1].members[0].number, 3);

  // q, k, v = rearrange(einsum(...),\n "...", three=3) spans two lines.
  const Stmt &qkv = *loop.body[9];
  ASSERT_EQ(qkv.targets.size(), 3u);
  EXPECT_EQ(qkv.targets[2].name, "v");
  EXPECT_EQ(qkv.targets[2].loc.col, 11u);
  const Expr &call = *qkv.value;
  EXPECT_EQ(call.callee, "rearrange");
  ASSERT_EQ(call.args.size(), 2u);
  EXPECT_EQ(call.args[1]->loc.line, 38u);
  ASSERT_EQ(call.kwargs.size(), 1u);
  EXPECT_EQ(call.kwargs[0].name, "three");
  EXPECT_EQ(call.kwargs[0].loc.line, 38u);
  EXPECT_EQ(call.kwargs[0].loc.col, 83u);

  EXPECT_EQ(s[19]->kind, StmtKind::Minimize);
}

TEST(ParserTest, PrinterCoversEveryNode) {
  Parsed p = parse(readExample("gpt.ein"));
  std::string out;
  llvm::raw_string_ostream os(out);
  printAST(*p.program, os);
  EXPECT_NE(out.find("(fn @17:1 name=layernorm@17:4"), std::string::npos);
  EXPECT_NE(out.find("(for @26:1 var=layer@26:5 in=layers@26:14"), std::string::npos);
  EXPECT_NE(out.find("(kwarg three @38:83"), std::string::npos);
  EXPECT_NE(out.find("shape=[d@29:19, (3@29:23 heads@29:25 hd@29:31)@29:22]"), std::string::npos)
      << out;
  EXPECT_NE(out.find("(number 1e-5 float @21:29)"), std::string::npos);
  // Deterministic.
  std::string again;
  llvm::raw_string_ostream os2(again);
  printAST(*p.program, os2);
  EXPECT_EQ(out, again);
}

//===--- Expressions ------------------------------------------------------===//

TEST(ParserTest, Precedence) {
  EXPECT_EQ(exprOf("a + b * c"), "(+ a (* b c))");
  EXPECT_EQ(exprOf("a * b + c"), "(+ (* a b) c)");
  EXPECT_EQ(exprOf("a - b - c"), "(- (- a b) c)");
  EXPECT_EQ(exprOf("a / b / c"), "(/ (/ a b) c)");
  EXPECT_EQ(exprOf("(a + b) * c"), "(* (+ a b) c)");
  EXPECT_EQ(exprOf("-a * b"), "(* (neg a) b)");
  EXPECT_EQ(exprOf("- - a"), "(neg (neg a))");
  EXPECT_EQ(exprOf("a - -b"), "(- a (neg b))");
}

TEST(ParserTest, PowerIsRightAssociativeAndBindsTighterThanUnaryMinus) {
  EXPECT_EQ(exprOf("a ** b ** c"), "(** a (** b c))");
  EXPECT_EQ(exprOf("-a ** b"), "(neg (** a b))");
  EXPECT_EQ(exprOf("a ** -b"), "(** a (neg b))");
  EXPECT_EQ(exprOf("2 * a ** 2"), "(* 2 (** a 2))");
  EXPECT_EQ(exprOf("f(x) ** 2"), "(** (call f x) 2)");
  EXPECT_EQ(exprOf("t[i] ** 2"), "(** (index t i) 2)");
}

TEST(ParserTest, CallsAndIndexing) {
  EXPECT_EQ(exprOf("f()"), "(call f)");
  EXPECT_EQ(exprOf("f(a, b, k=1, m=-2)"), "(call f a b k=1 m=(neg 2))");
  EXPECT_EQ(exprOf("f(a,)"), "(call f a)");
  EXPECT_EQ(exprOf("f(g(a), \"s\")"), "(call f (call g a) \"s\")");
  EXPECT_EQ(exprOf("t[i][j]"), "(index (index t i) j)");
  EXPECT_EQ(exprOf("f(x)[i]"), "(index (call f x) i)");
  EXPECT_EQ(exprOf("uniform(-0.1, 0.1)"), "(call uniform (neg 0.1) 0.1)");
  EXPECT_EQ(exprOf("f(a,\n  b,\n  k = 3)"), "(call f a b k=3)");
}

TEST(ParserTest, Lists) {
  EXPECT_EQ(exprOf("rearrange([a, b * 2], \"p\")"), "(call rearrange (list a (* b 2)) \"p\")");
  EXPECT_EQ(exprOf("[]"), "(list)");
  EXPECT_EQ(exprOf("[a,]"), "(list a)");
  EXPECT_EQ(exprOf("[a,\n b][i]"), "(index (list a b) i)");
}

TEST(ParserTest, ExpressionLocations) {
  Parsed p = parse("x = a + f(b)[c]\n");
  ASSERT_FALSE(p.diags->hasErrors());
  const Expr &add = *p.program->stmts[0]->value;
  EXPECT_EQ(add.loc.col, 7u); // the operator
  const Expr &index = *add.args[1];
  EXPECT_EQ(index.kind, ExprKind::Index);
  EXPECT_EQ(index.loc.col, 9u);
  EXPECT_EQ(index.args[0]->calleeLoc.col, 9u);
  EXPECT_EQ(index.args[1]->loc.col, 14u);
}

TEST(ParserTest, Literals) {
  Parsed p = parse("x = 3\ny = 1e-5\nz = \"a -> b\"\n");
  ASSERT_FALSE(p.diags->hasErrors());
  const Expr &three = *p.program->stmts[0]->value;
  EXPECT_TRUE(three.isInteger);
  EXPECT_EQ(three.number, 3);
  const Expr &eps = *p.program->stmts[1]->value;
  EXPECT_FALSE(eps.isInteger);
  EXPECT_DOUBLE_EQ(eps.number, 1e-5);
  EXPECT_EQ(eps.text, "1e-5");
  const Expr &str = *p.program->stmts[2]->value;
  EXPECT_EQ(str.kind, ExprKind::String);
  EXPECT_EQ(str.text, "a -> b");
  EXPECT_EQ(str.loc.col, 5u);
}

TEST(ParserTest, SingleExpressionEntryPoint) {
  SourceFile file("e", "1 + 2 * x");
  DiagnosticEngine diags(file);
  ExprPtr e = parseExpression(file, diags);
  EXPECT_EQ(sexpr(e.get()), "(+ 1 (* 2 x))");
  SourceFile bad("e", "1 +");
  DiagnosticEngine badDiags(bad);
  EXPECT_EQ(parseExpression(bad, badDiags), nullptr);
  EXPECT_TRUE(badDiags.hasErrors());
}

//===--- Statements -------------------------------------------------------===//

TEST(ParserTest, Declarations) {
  Parsed p = parse("input x: f32[3, ..., (a 2)]\n"
                   "param p: bf16[a] ~ uniform(-0.1, 0.1)\n"
                   "param q: []\n");
  ASSERT_FALSE(p.diags->hasErrors()) << p.printed();
  const Stmt &x = *p.program->stmts[0];
  EXPECT_EQ(x.dtype, "f32");
  ASSERT_EQ(x.shape.size(), 3u);
  EXPECT_EQ(x.shape[0].kind, AxisSpec::Kind::Number);
  EXPECT_EQ(x.shape[0].number, 3);
  EXPECT_EQ(x.shape[1].kind, AxisSpec::Kind::Ellipsis);
  EXPECT_EQ(x.shape[2].members[1].number, 2);
  const Stmt &param = *p.program->stmts[1];
  EXPECT_EQ(param.dtype, "bf16");
  EXPECT_EQ(param.nameLoc.col, 7u);
  EXPECT_EQ(sexpr(param.value.get()), "(call uniform (neg 0.1) 0.1)");
  const Stmt &q = *p.program->stmts[2];
  EXPECT_TRUE(q.shape.empty());
  EXPECT_EQ(q.value, nullptr);
}

TEST(ParserTest, FunctionWithDtypedParams) {
  Parsed p = parse("fn f(ids: i32[b], t: [v, e],) -> [b, e] {\n"
                   "  y = t[ids]\n\n  return y\n}\n");
  ASSERT_FALSE(p.diags->hasErrors()) << p.printed();
  const Stmt &fn = *p.program->stmts[0];
  ASSERT_EQ(fn.params.size(), 2u);
  EXPECT_EQ(fn.params[0].dtype, "i32");
  EXPECT_EQ(fn.params[1].dtype, "");
  EXPECT_EQ(fn.params[1].loc.col, 19u);
  EXPECT_EQ(fn.body.size(), 2u);
}

TEST(ParserTest, NestedLoopsAndOneLineBlocks) {
  Parsed p = parse("for i in n {\n  for j in m { x = x + 1 }\n  param w: [d]\n}\n");
  ASSERT_FALSE(p.diags->hasErrors()) << p.printed();
  const Stmt &outer = *p.program->stmts[0];
  ASSERT_EQ(outer.body.size(), 2u);
  EXPECT_EQ(outer.body[0]->kind, StmtKind::For);
  EXPECT_EQ(outer.body[0]->body.size(), 1u);
  EXPECT_EQ(outer.body[1]->kind, StmtKind::Param);
}

TEST(ParserTest, TrainSection) {
  Parsed p = parse("train {\n  optimizer = adamw\n  lr = 3e-4\n\n"
                   "  schedule = cosine(warmup=100)\n}\n");
  ASSERT_FALSE(p.diags->hasErrors()) << p.printed();
  const Stmt &train = *p.program->stmts[0];
  ASSERT_EQ(train.kind, StmtKind::Train);
  ASSERT_EQ(train.settings.size(), 3u);
  EXPECT_EQ(train.settings[0].key, "optimizer");
  EXPECT_EQ(train.settings[1].loc.line, 3u);
  EXPECT_EQ(sexpr(train.settings[2].value.get()), "(call cosine warmup=100)");

  Parsed oneLine = parse("train { lr = 1 }\n");
  EXPECT_FALSE(oneLine.diags->hasErrors()) << oneLine.printed();
  EXPECT_EQ(oneLine.program->stmts[0]->settings.size(), 1u);
}

TEST(ParserTest, NoTrailingNewlineNeeded) {
  Parsed p = parse("output x");
  EXPECT_FALSE(p.diags->hasErrors());
  EXPECT_EQ(p.program->stmts.size(), 1u);
}

//===--- Diagnostics ------------------------------------------------------===//

TEST(ParserTest, ErrorTextAndCaret) {
  Parsed p = parse("input x: i32[a, b\n");
  EXPECT_EQ(p.printed(), "t.ein:1:18: error: expected ',' or ']' in shape, "
                         "found newline\n"
                         "input x: i32[a, b\n"
                         "                 ^\n");
}

struct ErrorCase {
  const char *text;
  const char *message;
  unsigned line, col;
};

TEST(ParserTest, ErrorMessages) {
  const ErrorCase cases[] = {
      {"dim = 3", "expected a dim name after 'dim', found '='", 1, 5},
      {"dim a 3", "expected '=' after dim name, found '3'", 1, 7},
      {"dim a =", "expected an expression, found newline", 1, 8},
      {"input x [a]", "expected ':' after input name, found '['", 1, 9},
      {"input x: [a]", "expected a dtype after ':', found '['", 1, 10},
      {"input x: f32 a", "expected '[' to start a shape, found 'a'", 1, 14},
      {"param w: [a b]", "expected ',' or ']' in shape, found 'b'", 1, 13},
      {"param w: [a,]",
       "expected an axis (a name, an integer, '...' or "
       "'( )'), found ']'",
       1, 13},
      {"param w: [(a (b))]", "nested parentheses are not allowed in a shape", 1, 14},
      {"param w: [()]",
       "expected an axis name or integer after '(', found "
       "')'",
       1, 12},
      {"param w: [(a ...)]", "'...' is not allowed inside '( )' in a shape", 1, 14},
      {"param w: [1.5]", "axis size must be an integer, found '1.5'", 1, 11},
      {"param w: [a] zeros", "expected newline after statement, found 'zeros'", 1, 14},
      {"x = (a + b", "expected ')' to close '(', found newline", 1, 11},
      {"x = f(a b)", "expected ',' or ')' in call to 'f', found 'b'", 1, 9},
      {"x = t[i", "expected ']' after index, found newline", 1, 8},
      {"x = f(k=1, a)", "positional argument after keyword argument", 1, 12},
      {"x = f(k=1, k=2)", "duplicate keyword argument 'k'", 1, 12},
      {"x = (f)(a)", "only a function name can be called", 1, 8},
      {"x + 1", "expected '=' or ',' after assignment target, found '+'", 1, 3},
      {"a, = 1", "expected a name after ',' in assignment targets, found '='", 1, 4},
      {"a, b c = 1", "expected '=' or ',' after assignment targets, found 'c'", 1, 6},
      {"= 1", "expected a statement, found '='", 1, 1},
      {"fn (x: [a]) -> [a] {\n}",
       "expected a function name after 'fn', "
       "found '('",
       1, 4},
      {"fn f x", "expected '(' after function name, found 'x'", 1, 6},
      {"fn f(x [a])", "expected ':' after parameter name, found '['", 1, 8},
      {"fn f(x: [a] y: [a])", "expected ',' or ')' after parameter, found 'y'", 1, 13},
      {"fn f(x: [a]) {\n}",
       "expected '->' and the result shape after ')', "
       "found '{'",
       1, 14},
      {"fn f(x: [a]) -> [a]\n",
       "expected '{' to start the function body, "
       "found newline",
       1, 20},
      {"for in n {\n}", "expected a loop variable after 'for', found 'in'", 1, 5},
      {"for i n {\n}", "expected 'in' after loop variable, found 'n'", 1, 7},
      {"for i in {\n}", "expected a dim name after 'in', found '{'", 1, 10},
      {"train lr = 1", "expected '{' after 'train', found 'lr'", 1, 7},
      {"train {\n  lr 1\n}", "expected '=' after setting name, found '1'", 2, 6},
      {"train {\n  3 = 1\n}",
       "expected a setting name in the train section, "
       "found '3'",
       2, 3},
      {"}", "expected a statement, found '}' (no block is open)", 1, 1},
      {"return 1", "'return' is only allowed in a function body", 1, 1},
      {"for i in n {\n  output x\n}",
       "'output' is not allowed inside a 'for' "
       "loop (only param, buffer, for and assignments "
       "are)",
       2, 3},
      {"fn f(x: [a]) -> [a] {\n  param w: [a]\n}",
       "only assignments and return are allowed in a function body, found "
       "'param'",
       2, 3},
  };
  for (const ErrorCase &c : cases) {
    Parsed p = parse(c.text);
    ASSERT_TRUE(p.diags->hasErrors()) << c.text;
    const Diagnostic &d = p.diags->diagnostics()[0];
    EXPECT_EQ(d.message, c.message) << c.text;
    EXPECT_EQ(d.loc.line, c.line) << c.text;
    EXPECT_EQ(d.loc.col, c.col) << c.text;
  }
}

TEST(ParserTest, UnclosedBlockHasANote) {
  Parsed p = parse("for i in n {\n  x = 1\n");
  ASSERT_EQ(p.diags->diagnostics().size(), 2u) << p.printed();
  EXPECT_EQ(p.diags->diagnostics()[0].message,
            "expected '}' to close the loop body, found end of file");
  EXPECT_EQ(p.diags->diagnostics()[1].severity, Diagnostic::Severity::Note);
  EXPECT_EQ(p.diags->diagnostics()[1].message, "the loop body starts here");
  EXPECT_EQ(p.diags->diagnostics()[1].loc.col, 12u);
}

TEST(ParserTest, LexerErrorsAreNotReportedTwice) {
  Parsed p = parse("x = $\ny = \"abc\nz = 1\n");
  ASSERT_EQ(p.diags->errorCount(), 2u) << p.printed();
  EXPECT_EQ(p.diags->diagnostics()[0].message, "unexpected character '$'");
  EXPECT_EQ(p.diags->diagnostics()[1].message, "unterminated string");
  ASSERT_EQ(p.program->stmts.size(), 1u);
  EXPECT_EQ(p.program->stmts[0]->targets[0].name, "z");
}

//===--- Recovery ---------------------------------------------------------===//

TEST(ParserTest, RecoversAtTheNextStatement) {
  Parsed p = parse("dim a = \nx = 1\ny = (2\ndim b = 3\nz = 4 4\nw = 5\n");
  EXPECT_EQ(p.diags->errorCount(), 3u) << p.printed();
  std::vector<std::string> names;
  for (const StmtPtr &s : p.program->stmts)
    names.push_back(s->kind == StmtKind::Assign ? s->targets[0].name : s->name);
  // y's '(' swallows the newline up to the `dim` keyword; z = 4 is kept.
  EXPECT_EQ(names, (std::vector<std::string>{"x", "b", "z", "w"}));
}

TEST(ParserTest, RecoversInsideBlocks) {
  Parsed p = parse("for i in n {\n  x = )\n  y = 2\n}\nz = 3\n");
  EXPECT_EQ(p.diags->errorCount(), 1u) << p.printed();
  ASSERT_EQ(p.program->stmts.size(), 2u);
  EXPECT_EQ(p.program->stmts[0]->body.size(), 1u);
  EXPECT_EQ(p.program->stmts[0]->body[0]->targets[0].name, "y");
}

TEST(ParserTest, BadBlockHeaderSkipsTheWholeBlock) {
  Parsed p = parse("for i in 3 {\n  x = 1\n  for j in m {\n  }\n}\nz = 3\n");
  EXPECT_EQ(p.diags->errorCount(), 1u) << p.printed();
  ASSERT_EQ(p.program->stmts.size(), 1u);
  EXPECT_EQ(p.program->stmts[0]->targets[0].name, "z");
}

TEST(ParserTest, MisplacedStatementsAreDroppedButTheRestIsKept) {
  Parsed p = parse("for i in n {\n  dim z = 1\n  fn g(a: [b]) -> [b] {\n"
                   "    return a\n  }\n  x = 1\n}\n");
  EXPECT_EQ(p.diags->errorCount(), 2u) << p.printed();
  ASSERT_EQ(p.program->stmts.size(), 1u);
  ASSERT_EQ(p.program->stmts[0]->body.size(), 1u);
  EXPECT_EQ(p.program->stmts[0]->body[0]->targets[0].name, "x");
}

TEST(ParserTest, StopsAfterTooManyErrors) {
  std::string text;
  for (int i = 0; i < 100; ++i)
    text += "x = = 1\n";
  Parsed p = parse(text, 5);
  EXPECT_TRUE(p.diags->stopped());
  EXPECT_EQ(p.diags->diagnostics().back().message, "too many errors; stopping");
  EXPECT_EQ(p.diags->diagnostics().size(), 6u);
}

TEST(ParserTest, DeepNestingIsAnErrorNotACrash) {
  for (const char *open : {"(", "-", "f(", "a**", "t["}) {
    std::string text = "x = ";
    for (int i = 0; i < 100000; ++i)
      text += open;
    text += "1\ny = 2\n";
    Parsed p = parse(text);
    ASSERT_TRUE(p.diags->hasErrors()) << open;
    EXPECT_EQ(p.firstMessage(), "expression nested too deeply") << open;
  }
  // Long left-associative chains are deep trees too: a limit of their own,
  // and a message that says what is wrong.
  std::string chain = "x = a";
  for (int i = 0; i < 100000; ++i)
    chain += " + a";
  Parsed p = parse(chain + "\ny = 2\n");
  EXPECT_EQ(p.firstMessage(), "expression too long: more than 1024 operands or levels in one "
                              "expression; split it into named parts");
  ASSERT_EQ(p.program->stmts.size(), 1u);
  EXPECT_EQ(p.program->stmts[0]->targets[0].name, "y");
  // A flat sum of 1,000 terms is a sum, not a nesting.
  std::string sum = "x = a";
  for (int i = 0; i < 999; ++i)
    sum += (i % 2 ? " + a" : " * a");
  EXPECT_FALSE(parse(sum + "\n").diags->hasErrors());

  // ... but 200 levels are fine.
  std::string ok = "x = ";
  for (int i = 0; i < 200; ++i)
    ok += "(";
  ok += "1";
  for (int i = 0; i < 200; ++i)
    ok += ")";
  EXPECT_FALSE(parse(ok).diags->hasErrors());

  std::string blocks;
  for (int i = 0; i < 1000; ++i)
    blocks += "for i in n {\n";
  Parsed b = parse(blocks);
  EXPECT_EQ(b.firstMessage(), "block nested too deeply");
}

TEST(ParserTest, WideExpressionsAreFine) {
  std::string text = "x = f(";
  for (int i = 0; i < 20000; ++i)
    text += "a, ";
  text += "b)\n";
  Parsed p = parse(text);
  EXPECT_FALSE(p.diags->hasErrors());
  EXPECT_EQ(p.program->stmts[0]->value->args.size(), 20001u);
}

} // namespace
