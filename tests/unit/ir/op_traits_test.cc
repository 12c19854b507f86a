// The operator traits table (ir/op_traits.h) against the facts it stands
// for: every primitive has a reference implementation whose input counts
// admit its arity, every Expr function names exactly one primitive and back,
// and the classes the kernels and the generator branch on are the ones they
// were written for.
#include "ir/op_traits.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "reference/op_registry.h"

namespace orchid {
namespace {

TEST(OpTraits, EveryPrimitiveHasAReferenceImplementation) {
  const reference::OpRegistry& registry = reference::OpRegistry::global();
  std::set<std::string_view> seen;
  for (const OpTraits& t : all_op_traits()) {
    EXPECT_TRUE(seen.insert(t.op).second) << t.op << " listed twice";
    const reference::OpSchema* schema = registry.find("", std::string(t.op));
    ASSERT_NE(schema, nullptr) << t.op;
    EXPECT_EQ(op_traits(t.op), &t);
    if (t.kind == PrimitiveKind::Elementwise) {
      EXPECT_GE(t.arity, 1) << t.op;
      EXPECT_LE(schema->min_inputs, size_t(t.arity)) << t.op;
      EXPECT_GE(schema->max_inputs, size_t(t.arity)) << t.op;
      EXPECT_NE(t.element, ElementClass::None) << t.op;
    } else {
      EXPECT_EQ(t.arity, 0) << t.op;
      EXPECT_EQ(t.element, ElementClass::None) << t.op;
    }
    for (size_t input : t.constant_inputs) EXPECT_LT(input, schema->max_inputs) << t.op;
  }
  EXPECT_EQ(op_traits("Softmax"), nullptr);  // fission rewrites it
  EXPECT_EQ(op_traits("NoSuchOp"), nullptr);
}

TEST(OpTraits, ExprFunctionsNameOnePrimitiveEach) {
  for (const expr::FuncInfo& info : expr::all_funcs()) {
    const std::string_view op = op_of_func(info.func);
    const OpTraits* t = op_traits(op);
    ASSERT_NE(t, nullptr) << info.name;
    EXPECT_EQ(t->func, info.func) << op;
    EXPECT_EQ(t->arity, 1) << op;
  }
  int with_func = 0;
  for (const OpTraits& t : all_op_traits()) with_func += t.func.has_value();
  EXPECT_EQ(size_t(with_func), expr::all_funcs().size());
}

TEST(OpTraits, ClassesTheKernelsBranchOn) {
  EXPECT_EQ(op_traits("Exp")->element, ElementClass::Arithmetic);
  EXPECT_TRUE(op_traits("Exp")->transcendental);
  EXPECT_TRUE(op_traits("Pow")->transcendental);
  EXPECT_FALSE(op_traits("Relu")->transcendental);
  EXPECT_EQ(op_traits("Mod")->element, ElementClass::Remainder);
  EXPECT_EQ(op_traits("Less")->element, ElementClass::Compare);
  EXPECT_EQ(op_traits("Not")->element, ElementClass::Logic);
  EXPECT_EQ(op_traits("Not")->arity, 1);
  EXPECT_EQ(op_traits("Where")->arity, 3);
  EXPECT_EQ(op_traits("Cast")->element, ElementClass::Convert);
  EXPECT_EQ(op_traits("Gather")->kind, PrimitiveKind::Layout);
  EXPECT_EQ(op_traits("Slice")->constant_inputs.size(), 4u);
  EXPECT_EQ(op_traits("ConvTranspose")->kind, PrimitiveKind::Linear);
  EXPECT_EQ(op_traits("TopK")->kind, PrimitiveKind::Opaque);
}

}  // namespace
}  // namespace orchid
