// The kernel IR (codegen/kernel_ir): literal folding, the hoisting pass, and
// golden texts of kernels the CPU lowering makes from fused groups (softmax,
// LayerNorm, a head transpose, a bilinear resize, a max pool, an offset sum).
// Whether the code they become computes the right values is
// codegen_cpu_test.cc's business; these fix the loop structure and the
// schedule, so that a change to either shows in review.
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>

#include "../runtime/runtime_test_util.h"
#include "codegen/cpu/emitter.h"
#include "codegen/cpu/render.h"
#include "codegen/kernel_ir/hoist.h"
#include "codegen/kernel_ir/printer.h"
#include "fission/fission.h"

namespace orchid::codegen::kir {
namespace {

using runtime::testing::GraphBuilder;

TEST(KernelIr, IndexArithmeticFoldsLiterals) {
  const Expr i = var("i");
  EXPECT_EQ(to_string(add(i, 0)), "i");
  EXPECT_EQ(to_string(add(add(i, 2), 3)), "(i + 5)");
  EXPECT_EQ(to_string(add(add(i, 2), -5)), "(i - 3)");
  EXPECT_EQ(to_string(mul(i, 1)), "i");
  EXPECT_EQ(to_string(mul(i, 0)), "0");
  EXPECT_EQ(to_string(div(mul(int_const(6), 4), 8)), "3");
  EXPECT_EQ(to_string(mod(i, 1)), "0");
  EXPECT_EQ(to_string(add(int_const(4), mul(i, 3))), "((i * 3) + 4)");
  EXPECT_EQ(to_string(binary(Op::Sub, mul(i, 3), mul(i, 3))), "0");
  EXPECT_EQ(to_string(clamp(int_const(9), 0, 4)), "4");
  EXPECT_EQ(to_string(clamp(i, 0, 4)), "min(max(i, 0), 4)");
  EXPECT_EQ(to_string(float_const(0.5)), "0.5f");
  EXPECT_EQ(to_string(float_const(0, Type::F64)), "0.0");
  EXPECT_EQ(to_string(select(binary(Op::Lt, i, int_const(3)), load("x", Type::F32, i), float_const(1))),
            "((i < 3) ? x[i] : 1.0f)");
  EXPECT_EQ(to_string(cast(Type::F32, var("acc", Type::F64))), "f32(acc)");
  EXPECT_EQ(to_string(cast(Type::F32, var("v", Type::F32))), "v");
}

// A loop body: a row-invariant let moves out (and on out of the outer loop
// when it names neither loop variable); one that names the loop variable,
// an accumulator or a let that stays does not.
TEST(KernelIr, HoistingMovesInvariantLetsOutOfLoops) {
  Stmt outer = loop_stmt("o", int_const(0), int_const(4));
  Stmt inner = loop_stmt("i", int_const(0), int_const(8));
  inner.body.push_back(let_stmt("t0", Type::I64, mul(var("o"), 8)));
  inner.body.push_back(let_stmt("t1", Type::F32, load("in1", Type::F32, var("t0"))));
  inner.body.push_back(let_stmt("t2", Type::I64, add(var("t0"), var("i"))));
  inner.body.push_back(let_stmt("t3", Type::F32, call("Exp", Type::F32, {float_const(2)})));
  inner.body.push_back(let_stmt("t4", Type::I64, add(var("t2"), 1)));
  inner.body.push_back(let_stmt("acc", Type::F64, float_const(0, Type::F64), true));
  inner.body.push_back(assign_stmt("acc", add(var("acc", Type::F64), var("t1"))));
  inner.body.push_back(let_stmt("t5", Type::F64, var("acc", Type::F64)));
  inner.body.push_back(store_stmt("out0", var("t2"), var("t1")));
  inner.body.push_back(let_stmt("t6", Type::F32, load("out0", Type::F32, var("t0"))));
  outer.body.push_back(std::move(inner));
  Block block = {std::move(outer)};
  hoist_invariants(block);
  EXPECT_EQ(print(block),
            "let t3: f32 = Exp(2.0f)\n"
            "for o in [0, 4):\n"
            "  let t0: i64 = (o * 8)\n"
            "  let t1: f32 = in1[t0]\n"
            "  for i in [0, 8):\n"
            "    let t2: i64 = (t0 + i)\n"
            "    let t4: i64 = (t2 + 1)\n"
            "    var acc: f64 = 0.0\n"
            "    acc = (acc + t1)\n"
            "    let t5: f64 = acc\n"
            "    out0[t2] = t1\n"
            "    let t6: f32 = out0[t0]\n");
}

TEST(KernelIr, RegionsAreNotCrossed) {
  Stmt region = region_stmt("y = Exp", true, 1 << 20);
  Stmt loop = loop_stmt("i", int_const(0), int_const(8), 1, LoopRole::Shared);
  loop.body.push_back(let_stmt("t0", Type::F32, load("in0", Type::F32, int_const(0))));
  region.body.push_back(std::move(loop));
  Block block = {std::move(region)};
  hoist_invariants(block);
  EXPECT_EQ(print(block),
            "region \"y = Exp\" parallel (work 1048576):\n"
            "  let t0: f32 = in0[0]\n"
            "  for i in [0, 8) shared:\n");
}

// The kernel of all primitives of `original` after fission, printed.
std::string lowered(const Graph& original) {
  const Graph primitives = fission::fission(original);
  std::vector<size_t> nodes(primitives.nodes().size());
  for (size_t i = 0; i < nodes.size(); ++i) nodes[i] = i;
  runtime::KernelGroup group = runtime::make_group(primitives, nodes);
  group.name = "k";
  const std::string text = print(cpu::lower_kernel(primitives, group));
  if (std::getenv("ORCHID_PRINT_KERNEL_IR")) std::cout << text;
  return text;
}

using fission::testing::attrs;
using fission::testing::one_node_graph;
using fission::testing::var;

TEST(KernelIr, GoldenSoftmax) {
  EXPECT_EQ(lowered(one_node_graph("Softmax", {var({3, 10})}, attrs({{"axis", int64_t(-1)}}))), R"(kernel k
  in0: f32[30] input 0
  out0: f32[30] output 0
region "Softmax0/ReduceMax_1:0 = ReduceMax; Softmax0/Exp_3:0 = Exp; Softmax0/ReduceSum_5:0 = ReduceSum; out0 = Div" serial (work 120):
  for o in [0, 3) shared:
    array scratch2_row: f32[1]
    array scratch1_row: f32[10]
    array scratch0_row: f32[1]
    var acc3: f32 = -inf
    let t5: i64 = (o * 10)
    acc3 = fold max in0[t5, (t5 + 10)) into acc3
    scratch0_row[0] = acc3
    let t8: f32 = scratch0_row[0]
    for i in [0, 10):
      let t6: i64 = ((o * 10) + i)
      let t7: f32 = in0[t6]
      let t9: f32 = (t7 - t8)
      let t10: f32 = ExpNonPositive(t9)
      scratch1_row[(t6 - (o * 10))] = t10
    var acc11: f64 = 0.0
    let t13: i64 = (o * 10)
    acc11 = fold sum scratch1_row[(t13 - (o * 10)), ((t13 - (o * 10)) + 10)) into acc11
    scratch2_row[0] = f32(acc11)
    let t16: f32 = scratch2_row[0]
    for i in [0, 10):
      let t14: i64 = ((o * 10) + i)
      let t15: f32 = scratch1_row[(t14 - (o * 10))]
      let t17: f32 = (t15 / t16)
      out0[t14] = t17
)");
}

TEST(KernelIr, GoldenLayerNorm) {
  EXPECT_EQ(lowered(one_node_graph("LayerNormalization", {var({4, 12}), var({12}), var({12})},
                                   attrs({{"axis", int64_t(-1)}}))),
            R"(kernel k
  in0: f32[48] input 0
  in2: f32[1] input 2
  in4: f32[1] input 4
  in5: f32[1] input 5
  in6: f32[12] input 6
  in7: f32[12] input 7
  out0: f32[48] output 0
region "LayerNormalization0/ReduceSum_2:0 = ReduceSum; LayerNormalization0/ReduceSum_8:0 = ReduceSum; out0 = Add" serial (work 144):
  for o in [0, 4) shared:
    array scratch1_row: f32[1]
    array scratch0_row: f32[1]
    var acc2: f64 = 0.0
    let t4: i64 = (o * 12)
    acc2 = fold sum in0[t4, (t4 + 12)) into acc2
    scratch0_row[0] = f32(acc2)
    var acc5: f64 = 0.0
    array r6buf: f32[12]
    let t9: f32 = scratch0_row[0]
    let t10: f32 = (t9 * 0.0833333358f)
    for r6j in [0, 12):
      let t7: i64 = ((o * 12) + r6j)
      let t8: f32 = in0[t7]
      let t11: f32 = (t8 - t10)
      let t12: f32 = (t11 * t11)
      r6buf[r6j] = t12
    acc5 = fold sum r6buf[0, 12) into acc5
    scratch1_row[0] = f32(acc5)
    let t15: f32 = scratch0_row[0]
    let t16: f32 = (t15 * 0.0833333358f)
    let t18: f32 = scratch1_row[0]
    let t19: f32 = (t18 * 0.0833333358f)
    let t20: f32 = (t19 + 9.99999975e-06f)
    let t21: f32 = Sqrt(t20)
    let t22: f32 = Reciprocal(t21)
    for i in [0, 12):
      let t13: i64 = ((o * 12) + i)
      let t14: f32 = in0[t13]
      let t17: f32 = (t14 - t16)
      let t23: f32 = (t17 * t22)
      let t24: f32 = in6[i]
      let t25: f32 = (t23 * t24)
      let t26: f32 = in7[i]
      let t27: f32 = (t25 + t26)
      out0[t13] = t27
)");
}

// A [1, 8, 64] activation split into 4 heads of 16: [1, 4, 8, 16].
TEST(KernelIr, GoldenHeadTranspose) {
  GraphBuilder b;
  ValueId x = b.input("x", {1, 8, 64});
  ValueId r = b.op("Reshape", {x, b.g.add_constant("shape", Tensor::vector_i64({1, 8, 4, 16}))});
  ValueId t = b.op("Transpose", {r}, attrs({{"perm", std::vector<int64_t>{0, 2, 1, 3}}}));
  EXPECT_EQ(lowered(b.finish(b.op("Relu", {t}))), R"(kernel k
  in0: f32[512] input 0
  out0: f32[512] output 0
region "Relu2_out0 = Relu" serial (work 512):
  for o in [0, 32) shared:
    let t0: i64 = (o % 8)
    let t1: i64 = (o / 8)
    for i in [0, 16):
      let t2: i64 = ((o * 16) + i)
      let t3: i64 = (((t0 * 64) + (t1 * 16)) + i)
      let t4: f32 = in0[t3]
      let t5: f32 = Relu(t4)
      out0[t2] = t5
)");
}

// Along the row the tables are affine per phase: a loop over k with the
// body for i = 2k and i = 2k + 1, edges apart.
TEST(KernelIr, GoldenBilinearResize) {
  EXPECT_EQ(lowered(one_node_graph("Resize", {var({1, 1, 2, 10}), fission::testing::none(),
                                              fission::testing::cst(DType::Float32, {4}, std::vector<float>{1, 1, 1, 2})},
                                   attrs({{"mode", std::string("linear")}}))),
            R"(kernel k
  in0: f32[20] input 0
  in2: f32[20] input 2
  in4: f32[20] input 4
  out0: f32[40] output 0
  table0: i64[20] table {0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, ...}
  table1: i64[20] table {0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, ...}
region "out0 = Add" serial (work 40):
  for o in [0, 2) shared:
    for k in [0, 1):
      let t0: i64 = (k * 2)
      let t1: i64 = ((o * 20) + t0)
      let t2: i64 = ((o * 10) + k)
      let t3: f32 = in0[t2]
      let t4: f32 = in2[t0]
      let t5: f32 = (t3 * t4)
      let t6: f32 = in4[t0]
      let t7: f32 = (t3 * t6)
      let t8: f32 = (t5 + t7)
      out0[t1] = t8
      let t9: i64 = ((k * 2) + 1)
      let t10: i64 = ((o * 20) + t9)
      let t11: f32 = in2[t9]
      let t12: f32 = (t3 * t11)
      let t13: i64 = ((o * 10) + (k + 1))
      let t14: f32 = in0[t13]
      let t15: f32 = in4[t9]
      let t16: f32 = (t14 * t15)
      let t17: f32 = (t12 + t16)
      out0[t10] = t17
    for k in [1, 9):
      let t18: i64 = (k * 2)
      let t19: i64 = ((o * 20) + t18)
      let t20: i64 = ((o * 10) + (k - 1))
      let t21: f32 = in0[t20]
      let t22: f32 = in2[t18]
      let t23: f32 = (t21 * t22)
      let t24: i64 = ((o * 10) + k)
      let t25: f32 = in0[t24]
      let t26: f32 = in4[t18]
      let t27: f32 = (t25 * t26)
      let t28: f32 = (t23 + t27)
      out0[t19] = t28
      let t29: i64 = ((k * 2) + 1)
      let t30: i64 = ((o * 20) + t29)
      let t31: f32 = in2[t29]
      let t32: f32 = (t25 * t31)
      let t33: i64 = ((o * 10) + (k + 1))
      let t34: f32 = in0[t33]
      let t35: f32 = in4[t29]
      let t36: f32 = (t34 * t35)
      let t37: f32 = (t32 + t36)
      out0[t30] = t37
    for k in [9, 10):
      let t38: i64 = (k * 2)
      let t39: i64 = ((o * 20) + t38)
      let t40: i64 = ((o * 10) + (k - 1))
      let t41: f32 = in0[t40]
      let t42: f32 = in2[t38]
      let t43: f32 = (t41 * t42)
      let t44: i64 = ((o * 10) + k)
      let t45: f32 = in0[t44]
      let t46: f32 = in4[t38]
      let t47: f32 = (t45 * t46)
      let t48: f32 = (t43 + t47)
      out0[t39] = t48
      let t49: i64 = ((k * 2) + 1)
      let t50: i64 = ((o * 20) + t49)
      let t51: f32 = in2[t49]
      let t52: f32 = (t45 * t51)
      let t53: f32 = in4[t49]
      let t54: f32 = (t45 * t53)
      let t55: f32 = (t52 + t54)
      out0[t50] = t55
)");
}

TEST(KernelIr, GoldenMaxPool) {
  EXPECT_EQ(lowered(one_node_graph("MaxPool", {var({1, 2, 5, 6})},
                                   attrs({{"kernel_shape", std::vector<int64_t>{3, 3}},
                                          {"pads", std::vector<int64_t>{1, 1, 1, 1}},
                                          {"strides", std::vector<int64_t>{2, 2}}}))),
            R"(kernel k
  in0: f32[60] input 0
  in2: f32[1] input 2
  out0: f32[18] output 0
  scratch0: f32[112] scratch
region "MaxPool0/Pad_2:0 = Pad" serial (work 112):
  for o in [0, 14) shared:
    let t1: i64 = (o % 7)
    let t2: i64 = (o / 7)
    let t4: i64 = (t1 - 1)
    for i in [0, 1):
      let t3: i64 = ((o * 8) + i)
      let t5: i64 = (i - 1)
      scratch0[t3] = -inf
    let t7: i64 = (t1 - 1)
    for i in [1, 7):
      let t6: i64 = ((o * 8) + i)
      let t8: i64 = (i - 1)
      let t9: i64 = (((t2 * 30) + (t7 * 6)) + t8)
      let t10: f32 = (((t7 >= 0) && (t7 < 5)) ? in0[t9] : -inf)
      scratch0[t6] = t10
    let t12: i64 = (t1 - 1)
    for i in [7, 8):
      let t11: i64 = ((o * 8) + i)
      let t13: i64 = (i - 1)
      scratch0[t11] = -inf
region "out0 = Max" serial (work 18):
  for o in [0, 6) shared:
    let t14: i64 = (o % 3)
    let t15: i64 = (o / 3)
    for i in [0, 3):
      let t16: i64 = ((o * 3) + i)
      let t17: i64 = (((t15 * 56) + ((t14 * 2) * 8)) + (i * 2))
      let t18: f32 = scratch0[t17]
      let t19: i64 = (((t15 * 56) + ((t14 * 2) * 8)) + ((i * 2) + 1))
      let t20: f32 = scratch0[t19]
      let t21: f32 = max(t18, t20)
      let t22: i64 = (((t15 * 56) + ((t14 * 2) * 8)) + ((i * 2) + 2))
      let t23: f32 = scratch0[t22]
      let t24: f32 = max(t21, t23)
      let t25: i64 = (((t15 * 56) + (((t14 * 2) + 1) * 8)) + (i * 2))
      let t26: f32 = scratch0[t25]
      let t27: i64 = (((t15 * 56) + (((t14 * 2) + 1) * 8)) + ((i * 2) + 1))
      let t28: f32 = scratch0[t27]
      let t29: f32 = max(t26, t28)
      let t30: i64 = (((t15 * 56) + (((t14 * 2) + 1) * 8)) + ((i * 2) + 2))
      let t31: f32 = scratch0[t30]
      let t32: f32 = max(t29, t31)
      let t33: f32 = max(t24, t32)
      let t34: i64 = (((t15 * 56) + (((t14 * 2) + 2) * 8)) + (i * 2))
      let t35: f32 = scratch0[t34]
      let t36: i64 = (((t15 * 56) + (((t14 * 2) + 2) * 8)) + ((i * 2) + 1))
      let t37: f32 = scratch0[t36]
      let t38: f32 = max(t35, t37)
      let t39: i64 = (((t15 * 56) + (((t14 * 2) + 2) * 8)) + ((i * 2) + 2))
      let t40: f32 = scratch0[t39]
      let t41: f32 = max(t38, t40)
      let t42: f32 = max(t33, t41)
      out0[t16] = t42
)");
}

// A derived form's offset sum: shifted windows of one input added.
TEST(KernelIr, GoldenOffsetSum) {
  GraphBuilder b;
  ValueId x = b.input("x", {2, 10});
  auto window = [&](int64_t start) {
    return b.op("Slice", {x, b.g.add_constant("s" + std::to_string(start), Tensor::vector_i64({start})),
                          b.g.add_constant("e" + std::to_string(start), Tensor::vector_i64({start + 8})),
                          b.g.add_constant("a" + std::to_string(start), Tensor::vector_i64({1}))});
  };
  EXPECT_EQ(lowered(b.finish(b.op("Add", {b.op("Add", {window(0), window(1)}), window(2)}))), R"(kernel k
  in0: f32[20] input 0
  out0: f32[16] output 0
region "Add4_out0 = Add" serial (work 16):
  for o in [0, 2) shared:
    for i in [0, 8):
      let t0: i64 = ((o * 8) + i)
      let t1: i64 = ((o * 10) + i)
      let t2: f32 = in0[t1]
      let t3: i64 = ((o * 10) + (i + 1))
      let t4: f32 = in0[t3]
      let t5: f32 = (t2 + t4)
      let t6: i64 = ((o * 10) + (i + 2))
      let t7: f32 = in0[t6]
      let t8: f32 = (t5 + t7)
      out0[t0] = t8
)");
}

}  // namespace
}  // namespace orchid::codegen::kir
