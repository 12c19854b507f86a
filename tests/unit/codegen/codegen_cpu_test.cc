// Generated CPU kernels (codegen/cpu) against the reference interpreter: each
// case is an ONNX-level graph, split into primitives by fission, computed by
// ONE generated kernel of all its primitives. All cases share one library
// (one compiler run), built once per test process into a temporary cache.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <numeric>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "../runtime/runtime_test_util.h"
#include "codegen/cpu/compiler.h"
#include "codegen/cpu/emitter.h"
#include "codegen/cpu/render.h"
#include "fission/fission.h"
#include "runtime/artifact.h"
#include "runtime/kernels/cpu/generated_kernel.h"
#include "support/error.h"
#include "support/sha256.h"
#include "../test_temp_dir.h"

namespace orchid::codegen::cpu {
namespace {

namespace fs = std::filesystem;
using namespace orchid::runtime::testing;  // NOLINT: graph builders, expect_program_matches

// A temporary kernel cache for this process, removed at exit.
const fs::path& temp_dir() { return orchid::testing::process_temp_dir("orchid-codegen-test"); }

struct Case {
  Graph original;    // what the interpreter runs
  Graph primitives;  // fission(original), computed by one generated kernel
  runtime::KernelGroup group;
};

Case make_case(const std::string& name, Graph original) {
  Case c;
  c.primitives = fission::fission(original);
  c.original = std::move(original);
  std::vector<size_t> nodes(c.primitives.nodes().size());
  for (size_t i = 0; i < nodes.size(); ++i) nodes[i] = i;
  c.group = runtime::make_group(c.primitives, nodes);
  c.group.symbol = "kernel_" + name;
  return c;
}

Attributes ints_attr(const std::string& name, std::vector<int64_t> values) { return attrs({{name, values}}); }

ValueId constant_ints(Graph& g, const std::vector<int64_t>& values) {
  return g.add_constant("k" + std::to_string(g.num_values()), Tensor::vector_i64(values));
}

Graph elementwise_chain() {
  GraphBuilder b;
  ValueId x = b.input("x", {2, 3, 5, 7});
  ValueId y = b.input("y", {7});
  ValueId c = b.constant({3, 1, 7});
  ValueId t = b.op("Add", {x, c});
  t = b.op("Mul", {t, y});
  ValueId r = b.op("Relu", {t});
  ValueId s = b.op("Sigmoid", {b.op("Sub", {r, b.scalar(0.5f)})});
  ValueId e = b.op("Exp", {b.op("Tanh", {t})});
  ValueId m = b.op("Max", {s, b.op("Min", {e, b.op("Neg", {x})})});
  ValueId p = b.op("Pow", {m, b.scalar(2.0f)});
  ValueId q = b.op("Div", {b.op("Sqrt", {b.op("Abs", {p})}), b.op("Add", {b.op("Erf", {x}), b.scalar(3.0f)})});
  ValueId l = b.op("Log", {b.op("Add", {b.op("Abs", {q}), b.scalar(1.0f)})});
  ValueId f = b.op("Floor", {b.op("Mul", {l, b.scalar(10.0f)})});
  return b.finish(b.op("Add", {f, b.op("Pow", {b.op("Abs", {x}), y})}));
}

Graph softmax(const Shape& shape, int64_t axis) {
  return one_node_graph("Softmax", {var(shape)}, attrs({{"axis", axis}}));
}

Graph pool(const std::string& op, const Shape& shape, int64_t k, int64_t pad, int64_t stride = 1) {
  Attributes a = attrs({{"kernel_shape", std::vector<int64_t>{k, k}},
                        {"pads", std::vector<int64_t>{pad, pad, pad, pad}},
                        {"strides", std::vector<int64_t>{stride, stride}}});
  return one_node_graph(op, {var(shape)}, std::move(a));
}

Graph transpose_reshape() {
  GraphBuilder b;
  ValueId x = b.input("x", {2, 3, 4, 5});
  ValueId t = b.op("Transpose", {x}, ints_attr("perm", {0, 2, 3, 1}));
  t = b.op("Reshape", {t, constant_ints(b.g, {2, 20, 3})});
  t = b.op("Exp", {t});
  t = b.op("Transpose", {t}, ints_attr("perm", {2, 0, 1}));
  t = b.op("Reshape", {t, constant_ints(b.g, {6, 5, 4})});
  return b.finish(b.op("Add", {t, b.constant({5, 1})}));
}

Graph concat_slice() {
  GraphBuilder b;
  ValueId x = b.input("x", {2, 3, 5});
  ValueId y = b.input("y", {2, 4, 5});
  ValueId c = b.op("Concat", {x, b.op("Relu", {y}), x}, attrs({{"axis", int64_t(1)}}));
  // Every other row from the end, and a cropped column range.
  ValueId s = b.op("Slice", {c, constant_ints(b.g, {-1, 1}), constant_ints(b.g, {-100, 4}),
                             constant_ints(b.g, {1, 2}), constant_ints(b.g, {-2, 1})});
  return b.finish(b.op("Mul", {s, b.scalar(1.5f)}));
}

// A Concat as the stage's value: one loop nest per input over its range.
// Inputs computed inline (elementwise, broadcasting, a transpose), on the
// first, a middle and the last axis, odd sizes, and one large enough for
// parallel rows.
Graph concat_root(int64_t axis) {
  GraphBuilder b;
  const std::vector<Shape> shapes = {{2, 3, 5, 7}, {2, 3, 5, 7}, {2, 3, 5, 7}};
  Shape xs = {2, 3, 5, 7}, ys = xs, zs = xs;
  const size_t a = size_t(axis < 0 ? axis + 4 : axis);
  xs[a] = 3, ys[a] = 1, zs[a] = 4;
  ValueId x = b.input("x", xs);
  ValueId y = b.input("y", ys);
  Shape zt = zs;  // z arrives transposed: its last two axes swapped
  std::swap(zt[2], zt[3]);
  ValueId z = b.op("Transpose", {b.input("z", zt)}, ints_attr("perm", {0, 1, 3, 2}));
  Shape cs = xs;
  cs[a] = 1;
  ValueId scaled = b.op("Mul", {b.op("Relu", {x}), b.constant(cs)});
  return b.finish(b.op("Concat", {scaled, b.op("Tanh", {y}), z}, attrs({{"axis", axis}})));
}

Graph concat_root_parallel() {
  GraphBuilder b;
  ValueId x = b.input("x", {64, 40, 50});
  ValueId y = b.input("y", {64, 37, 50});
  return b.finish(b.op("Concat", {b.op("Sigmoid", {x}), b.op("Neg", {y})}, attrs({{"axis", int64_t(1)}})));
}

Graph where_compare() {
  GraphBuilder b;
  ValueId x = b.input("x", {3, 9});
  ValueId y = b.input("y", {9});
  ValueId less = b.op("Less", {x, y});
  ValueId ge = b.op("GreaterOrEqual", {x, b.scalar(0.5f)});
  ValueId both = b.op("Or", {b.op("And", {less, ge}), b.op("Not", {b.op("Equal", {x, y})})});
  ValueId w = b.op("Where", {both, b.op("Mul", {x, b.scalar(2.0f)}), b.op("Neg", {y})});
  ValueId as_float = b.op("Cast", {b.op("Greater", {w, b.scalar(0.0f)})}, attrs({{"to", int64_t(1)}}));
  return b.finish(b.op("Add", {w, as_float}));
}

// r = Relu(x) is an output and read again inside; s a reduction output.
Graph multi_output() {
  GraphBuilder b;
  ValueId x = b.input("x", {4, 6, 5});
  ValueId r = b.op("Relu", {x});
  ValueId s = b.op("ReduceSum", {r, constant_ints(b.g, {1})}, attrs({{"keepdims", int64_t(1)}}));
  ValueId t = b.op("Mul", {r, s});
  b.g.outputs().push_back(r);
  b.g.outputs().push_back(s);
  return b.finish(t);
}

Graph odd_shapes() {
  GraphBuilder b;
  ValueId x = b.input("x", {3, 1, 13});
  ValueId m = b.op("ReduceMax", {x, constant_ints(b.g, {0, 2})}, attrs({{"keepdims", int64_t(0)}}));
  ValueId n = b.op("ReduceMin", {x, constant_ints(b.g, {1})}, attrs({{"keepdims", int64_t(1)}}));
  ValueId e = b.op("Expand", {m, constant_ints(b.g, {2, 3, 1})});
  ValueId p = b.op("Pad", {n, constant_ints(b.g, {0, 1, -2, 1, 0, 2})}, {});  // negative pad crops
  ValueId g = b.op("Gather", {p, b.g.add_constant("idx", Tensor::from_vector(DType::Int64, {2, 2},
                                                                             std::vector<int64_t>{-1, 0, 1, 1}))},
                   attrs({{"axis", int64_t(1)}}));
  ValueId r = b.op("ReduceSum", {g, constant_ints(b.g, {0, 1, 2, 3})}, attrs({{"keepdims", int64_t(0)}}));
  b.g.outputs().push_back(e);
  b.g.outputs().push_back(g);
  return b.finish(r);
}

// Reductions of a stored value, folded where it lies: two trailing axes as
// one range longer than a chunk (folded chunk by chunk), a reduced axis
// before a kept one (a loop around the fold), 19-element rows (a tail after
// the 16-lane vectors), and a sum of an inlined expression (a chunk array).
Graph reductions_in_place() {
  GraphBuilder b;
  ValueId x = b.input("x", {2, 3, 17, 19});
  ValueId s = b.op("ReduceSum", {x, constant_ints(b.g, {2, 3})}, attrs({{"keepdims", int64_t(1)}}));
  ValueId m = b.op("ReduceMax", {x, constant_ints(b.g, {1, 3})}, attrs({{"keepdims", int64_t(0)}}));
  ValueId n = b.op("ReduceMin", {x, constant_ints(b.g, {3})}, attrs({{"keepdims", int64_t(1)}}));
  ValueId q = b.op("ReduceSum", {b.op("Mul", {x, x}), constant_ints(b.g, {3})}, attrs({{"keepdims", int64_t(1)}}));
  b.g.outputs().push_back(s);
  b.g.outputs().push_back(m);
  b.g.outputs().push_back(n);
  return b.finish(q);
}

Graph resize_nearest() {
  return one_node_graph("Resize", {var({1, 2, 5, 7}), none(), cst(DType::Float32, {4}, std::vector<float>{1, 1, 2, 3})},
                        attrs({{"mode", std::string("nearest")}}));
}

// A reflect pad (a Gather per axis in fission) then a per-channel affine map
// and a Relu: the last axis's table is affine over three ranges (left edge,
// interior, right edge), so the interior is read at i + offset, no table.
Graph reflect_pad_scale() {
  GraphBuilder b;
  ValueId x = b.input("x", {2, 3, 9, 40});
  ValueId p = b.op("Pad", {x, constant_ints(b.g, {0, 0, 2, 3, 0, 0, 1, 2})}, attrs({{"mode", std::string("reflect")}}));
  ValueId y = b.op("Add", {b.op("Mul", {p, b.constant({1, 3, 1, 1})}), b.constant({1, 3, 1, 1})});
  return b.finish(b.op("Relu", {y}));
}

// A nearest x2 upsample, then a reflect pad: two tables on the last axis,
// composed into one.
Graph upsample_reflect_pad() {
  GraphBuilder b;
  ValueId x = b.input("x", {1, 2, 6, 11});
  const ValueId scales =
      b.g.add_constant("scales", Tensor::from_vector(DType::Float32, {4}, std::vector<float>{1, 1, 2, 2}));
  ValueId u = b.op("Resize", {x, kNoValue, scales}, attrs({{"mode", std::string("nearest")}}));
  ValueId p = b.op("Pad", {u, constant_ints(b.g, {0, 0, 1, 1, 0, 0, 1, 1})}, attrs({{"mode", std::string("reflect")}}));
  return b.finish(b.op("Mul", {p, b.scalar(0.5f)}));
}

// Large transposes that move the source's last axis are materialized by
// tiled loops: NHWC -> NCHW read by a per-channel affine map, and a batched
// 2-D transpose with partial tiles on both axes as the group's output.
Graph nhwc_to_nchw_scale() {
  GraphBuilder b;
  ValueId x = b.input("x", {1, 40, 36, 19});
  ValueId t = b.op("Transpose", {x}, ints_attr("perm", {0, 3, 1, 2}));
  return b.finish(b.op("Relu", {b.op("Add", {t, b.constant({1, 19, 1, 1})})}));
}

Graph batched_transpose() {
  GraphBuilder b;
  ValueId x = b.input("x", {5, 70, 53});
  return b.finish(b.op("Transpose", {b.op("Tanh", {x})}, ints_attr("perm", {0, 2, 1})));
}

// Mish, x tanh(softplus x): the tanh of fission's softplus is one function
// of x (fast_math::tanh_softplus); sizes that are not a multiple of the
// vector width, one large enough for threads.
Graph mish(Shape shape) {
  GraphBuilder b;
  ValueId x = b.input("x", std::move(shape));
  return b.finish(b.op("Mul", {x, b.op("Tanh", {b.op("Softplus", {x})})}));
}

// Three transcendental functions of one element in one stage: computed
// chunk by chunk (a loop per function), sizes not a multiple of the chunk.
Graph three_transcendentals(Shape shape) {
  GraphBuilder b;
  ValueId x = b.input("x", std::move(shape));
  ValueId y = b.op("Mul", {b.op("Exp", {b.op("Mul", {x, b.scalar(0.25f)})}), b.op("Tanh", {x})});
  return b.finish(b.op("Add", {y, b.op("Sigmoid", {x})}));
}

// A token map plus a bias over its channels, reshaped channels-last and
// upsampled bilinearly (SegFormer's decoder after fission's
// channels_last_sum.h), 19 channels: not a multiple of the vector width.
Graph channels_last_upsample_bias() {
  GraphBuilder b;
  ValueId t = b.input("t", {1, 12, 19});
  ValueId x = b.op("Add", {t, b.constant({19})});
  x = b.op("Reshape", {x, constant_ints(b.g, {1, 3, 4, 19})});
  const ValueId scales =
      b.g.add_constant("scales", Tensor::from_vector(DType::Float32, {4}, std::vector<float>{1, 2, 2, 1}));
  x = b.op("Resize", {x, kNoValue, scales}, attrs({{"mode", std::string("linear")}}));
  return b.finish(b.op("Add", {x, b.input("u", {1, 6, 8, 19})}));
}

std::map<std::string, Case> make_cases() {
  std::map<std::string, Case> cases;
  auto add = [&](const std::string& name, Graph g) { cases.emplace(name, make_case(name, std::move(g))); };
  add("elementwise", elementwise_chain());
  add("softmax_last", softmax({4, 10, 33}, -1));
  add("softmax_middle", softmax({2, 17, 5, 3}, 1));
  add("layernorm", one_node_graph("LayerNormalization", {var({3, 7, 37}), var({37}), var({37})},
                                  attrs({{"axis", int64_t(-1)}})));
  add("instancenorm", one_node_graph("InstanceNormalization", {var({2, 3, 5, 6}), var({3}), var({3})}));
  add("maxpool3", pool("MaxPool", {1, 3, 9, 10}, 3, 1));
  add("maxpool5", pool("MaxPool", {2, 2, 11, 13}, 5, 2));
  add("maxpool3s2", pool("MaxPool", {1, 4, 12, 9}, 3, 1, 2));
  add("maxpool13", pool("MaxPool", {1, 3, 17, 15}, 13, 6));
  add("relu_maxpool", [] {
    GraphBuilder b;
    ValueId x = b.input("x", {1, 4, 12, 20});
    Attributes a = attrs({{"kernel_shape", std::vector<int64_t>{3, 3}},
                          {"pads", std::vector<int64_t>{1, 1, 1, 1}},
                          {"strides", std::vector<int64_t>{2, 2}}});
    return b.finish(b.op("MaxPool", {b.op("Relu", {x})}, std::move(a)));
  }());
  add("averagepool", pool("AveragePool", {1, 3, 8, 9}, 3, 1));
  add("resize", resize_nearest());
  add("transpose_reshape", transpose_reshape());
  add("concat_slice", concat_slice());
  add("concat_root_first", concat_root(0));
  add("concat_root_middle", concat_root(2));
  add("concat_root_last", concat_root(-1));
  add("concat_root_parallel", concat_root_parallel());
  add("reflect_pad_scale", reflect_pad_scale());
  add("upsample_reflect_pad", upsample_reflect_pad());
  add("channels_last_upsample_bias", channels_last_upsample_bias());
  add("nhwc_to_nchw_scale", nhwc_to_nchw_scale());
  add("batched_transpose", batched_transpose());
  add("mish_small", mish({3, 333}));
  add("mish_parallel", mish({2, 16, 40, 41}));
  add("transcendentals_small", three_transcendentals({3, 333}));
  add("upsample_nearest_x2", one_node_graph("Resize", {var({1, 3, 5, 20}), none(),
                                                       cst(DType::Float32, {4}, std::vector<float>{1, 1, 2, 2})},
                                            attrs({{"mode", std::string("nearest")}})));
  add("upsample_linear_x4", one_node_graph("Resize", {var({2, 3, 4, 19}), none(),
                                                      cst(DType::Float32, {4}, std::vector<float>{1, 1, 4, 4})},
                                           attrs({{"mode", std::string("linear")}})));
  add("upsample_linear_x3_align", one_node_graph("Resize", {var({1, 2, 3, 17}), none(),
                                                            cst(DType::Float32, {4}, std::vector<float>{1, 1, 3, 3})},
                                                 attrs({{"mode", std::string("linear")},
                                                        {"coordinate_transformation_mode", std::string("asymmetric")}})));
  add("transcendentals_parallel", three_transcendentals({2, 16, 40, 41}));
  add("where", where_compare());
  add("multi_output", multi_output());
  add("odd_shapes", odd_shapes());
  add("reductions_in_place", reductions_in_place());
  // Big enough for the OpenMP threshold: parallel rows, and one long row
  // split across threads.
  add("parallel_softmax", softmax({96, 700}, -1));
  add("parallel_row", [] {
    GraphBuilder b;
    ValueId x = b.input("x", {50001});
    return b.finish(b.op("Mul", {b.op("Tanh", {x}), b.op("Max", {x, b.scalar(0.25f)})}));
  }());
  return cases;
}

// The nodes can_fuse rejects, for failure messages.
std::string unfusable(const Graph& g) {
  std::string text;
  for (const Node& node : g.nodes()) {
    if (!can_fuse(g, node)) text += " " + node.describe();
  }
  return text;
}

struct Suite {
  std::map<std::string, Case> cases = make_cases();
  BuildResult library;
  std::string source;
};

// The cases and their one library, built on first use.
Suite& suite() {
  static Suite* s = [] {
    auto* suite = new Suite;
    suite->source = emit_library(Graph(), {});  // the prelude
    for (auto& [name, c] : suite->cases) {
      EXPECT_TRUE(can_generate(c.primitives, c.group)) << name << unfusable(c.primitives);
      if (can_generate(c.primitives, c.group)) suite->source += emit_kernel(c.primitives, c.group, c.group.symbol);
    }
    // ORCHID_DUMP_CODEGEN=FILE keeps the generated source for reading.
    if (const char* dump = std::getenv("ORCHID_DUMP_CODEGEN")) std::ofstream(dump) << suite->source;
    suite->library = build_library(suite->source, temp_dir().string());
    std::cout << "[codegen] compiled " << suite->cases.size() << " kernels in " << suite->library.seconds << " s\n";
    return suite;
  }();
  return *s;
}

runtime::Program program_of(const Case& c, std::string source, const BuildResult& library) {
  runtime::Program program;
  program.graph = c.primitives;
  program.kernels = {c.group};
  program.generated_source = std::move(source);
  program.library_path = library.library_path;
  program.library_sha256 = library.sha256;
  return program;
}

runtime::Program program_of(const Case& c) { return program_of(c, suite().source, suite().library); }

void expect_case(const std::string& name, double lo = -2, double hi = 2) {
  const Case& c = suite().cases.at(name);
  ASSERT_TRUE(can_generate(c.primitives, c.group));
  std::vector<std::string> kinds =
      expect_program_matches(c.original, program_of(c), uniform_feeds(c.original, 5, lo, hi));
  EXPECT_EQ(kinds, std::vector<std::string>{"generated"});
}

TEST(CodegenCpu, ElementwiseChainWithBroadcasting) { expect_case("elementwise"); }
TEST(CodegenCpu, SoftmaxLastAxis) { expect_case("softmax_last"); }
TEST(CodegenCpu, SoftmaxMiddleAxis) { expect_case("softmax_middle"); }
TEST(CodegenCpu, LayerNormalization) { expect_case("layernorm"); }
TEST(CodegenCpu, InstanceNormalization) { expect_case("instancenorm"); }
TEST(CodegenCpu, MaxPool3x3) { expect_case("maxpool3"); }
TEST(CodegenCpu, MaxPool5x5) { expect_case("maxpool5"); }
TEST(CodegenCpu, MaxPoolStride2) { expect_case("maxpool3s2"); }
// The Pad of a computed value (a Relu before a max pool): the row loop is
// split where the padding ends and begins, so the interior reads the input
// at i - 1 with neither a clamped index nor a test, and the edges store the
// pad value.
TEST(CodegenCpu, PadOfAComputedValueIsLoweredInRuns) {
  expect_case("relu_maxpool");
  const Case& c = suite().cases.at("relu_maxpool");
  const std::string code = emit_kernel(c.primitives, c.group, "k");
  EXPECT_NE(code.find("for (int64_t i = 1; i < 21; ++i) {"), std::string::npos) << code;
  EXPECT_EQ(code.find("std::max<int64_t>((i - 1)"), std::string::npos) << code;
}
// A 13x13 window's first-axis maxima are stored once (a stage of their own)
// and the second axis's 13 taps read them; a 3x3 window's stay inline.
TEST(CodegenCpu, LargePoolWindowsStoreTheFirstAxisMaxima) {
  expect_case("maxpool13");
  auto stages = [](const std::string& code) {
    size_t count = 0;
    for (size_t at = code.find(" = Max"); at != std::string::npos; at = code.find(" = Max", at + 1)) ++count;
    return count;
  };
  const Case& large = suite().cases.at("maxpool13");
  EXPECT_EQ(stages(emit_kernel(large.primitives, large.group, "k")), 2u);
  const Case& small = suite().cases.at("maxpool3");
  EXPECT_EQ(stages(emit_kernel(small.primitives, small.group, "k")), 1u);
}
TEST(CodegenCpu, AveragePool) { expect_case("averagepool"); }
TEST(CodegenCpu, NearestResize) { expect_case("resize"); }
TEST(CodegenCpu, TransposeReshapeChain) { expect_case("transpose_reshape"); }
TEST(CodegenCpu, ConcatAndSlice) { expect_case("concat_slice"); }
TEST(CodegenCpu, ReflectPadReadsItsInteriorAtAffineAddresses) {
  expect_case("reflect_pad_scale");
  const Case& c = suite().cases.at("reflect_pad_scale");
  const std::string code = emit_kernel(c.primitives, c.group, "k");
  // The last axis, 3 + 40 + 2 wide: one inner loop per range where the
  // reflection is affine, the interior one at i - 3 without a table read.
  EXPECT_NE(code.find("for (int64_t i = 3; i < 43; ++i) {"), std::string::npos) << code;
  EXPECT_EQ(code.find("[i]"), std::string::npos) << code;
  // The per-channel scale and shift are loaded once per row, before the loops.
  const size_t first_loop = code.find("for (int64_t i = 0;");
  EXPECT_LT(code.find("in3["), first_loop) << code;
  EXPECT_LT(code.find("in4["), first_loop) << code;
}
TEST(CodegenCpu, LargeTransposesAreWrittenInTiles) {
  for (const char* name : {"nhwc_to_nchw_scale", "batched_transpose"}) {
    SCOPED_TRACE(name);
    expect_case(name);
    const Case& c = suite().cases.at(name);
    EXPECT_NE(emit_kernel(c.primitives, c.group, "k").find("= Transpose (tiled)"), std::string::npos);
  }
}
TEST(CodegenCpu, SeveralTranscendentalsAreComputedChunkByChunk) {
  for (const char* name : {"transcendentals_small", "transcendentals_parallel"}) {
    SCOPED_TRACE(name);
    expect_case(name, -30, 30);
    const Case& c = suite().cases.at(name);
    const std::string code = emit_kernel(c.primitives, c.group, "k");
    EXPECT_NE(code.find("ib += 256"), std::string::npos) << code;
  }
}
// An upsampling's tables along the row are affine per phase (i = s k + p
// reads k + offset[p]): the row loop runs over k, the body once per phase,
// loads at affine addresses; the edges (clamped) are runs of their own.
TEST(CodegenCpu, UpsamplingRowsArePhaseSplit) {
  for (const char* name : {"upsample_nearest_x2", "upsample_linear_x4", "upsample_linear_x3_align"}) {
    SCOPED_TRACE(name);
    expect_case(name);
    const Case& c = suite().cases.at(name);
    const std::string code = emit_kernel(c.primitives, c.group, "k");
    EXPECT_NE(code.find("for (int64_t k = "), std::string::npos) << code;
  }
}
// A softmax's or a normalization's passes share one row loop, and the values
// only that loop reads (the exponentials, the means) are per-row arrays, not
// scratch buffers of the call.
TEST(CodegenCpu, RowPassesShareOneLoopAndRowArrays) {
  for (const char* name : {"softmax_last", "layernorm", "instancenorm"}) {
    SCOPED_TRACE(name);
    expect_case(name);
    const Case& c = suite().cases.at(name);
    const std::string code = emit_kernel(c.primitives, c.group, "k");
    EXPECT_EQ(code.find("orchid_scratch("), std::string::npos) << code;
    EXPECT_NE(code.find("_row["), std::string::npos) << code;
    EXPECT_EQ(code.find("for (int64_t o = "), code.rfind("for (int64_t o = ")) << code;
  }
}
TEST(CodegenCpu, MishIsOneExponentialPerElement) {
  for (const char* name : {"mish_small", "mish_parallel"}) {
    SCOPED_TRACE(name);
    expect_case(name, -30, 30);
    const Case& c = suite().cases.at(name);
    const std::string code = emit_kernel(c.primitives, c.group, "k");
    EXPECT_NE(code.find("fm::tanh_softplus("), std::string::npos) << code;
    EXPECT_EQ(code.find("fm::log("), std::string::npos) << code;
  }
}
// A Reshape that keeps the channel axis keeps its coordinate: the bias is
// read at the channel loop's index, not at a remainder of the token map's
// linear index (a remainder per tap kept GCC from vectorizing the loop).
TEST(CodegenCpu, ReshapeKeepsTrailingCoordinates) {
  expect_case("channels_last_upsample_bias");
  const Case& c = suite().cases.at("channels_last_upsample_bias");
  const std::string code = emit_kernel(c.primitives, c.group, "k");
  EXPECT_EQ(code.find("% 19)"), std::string::npos) << code;
}
TEST(CodegenCpu, ChainedGathersReadOneComposedTable) {
  expect_case("upsample_reflect_pad");
  const Case& c = suite().cases.at("upsample_reflect_pad");
  const std::string code = emit_kernel(c.primitives, c.group, "k");
  // Resize and Pad give two tables per axis; the load reads one composed
  // table per axis: pad[upsample[k]] over the 2 * 11 + 2 output columns.
  EXPECT_NE(code.find("[] = {0,0,0,1,1,2,2,3,3,4,4,5,5,6,6,7,7,8,8,9,9,10,10,10};"), std::string::npos) << code;
}
// An innermost serial loop that stores only into buffers it does not read
// is marked `#pragma GCC ivdep` (kernel buffers never overlap), which lets
// GCC vectorize its table gathers; one that reads what it writes is not.
TEST(CodegenCpu, LoopsWritingWhatTheyDoNotReadAreMarkedIndependent) {
  const Case& c = suite().cases.at("upsample_reflect_pad");
  const std::string code = emit_kernel(c.primitives, c.group, "k");
  const size_t mark = code.find("#pragma GCC ivdep");
  ASSERT_NE(mark, std::string::npos) << code;
  const size_t next = code.find_first_not_of(" \n", code.find('\n', mark));
  EXPECT_EQ(code.compare(next, 4, "for "), 0) << code;
}
TEST(CodegenCpu, LoopsReadingWhatTheyWriteAreNotMarkedIndependent) {
  using namespace kir;  // NOLINT
  Kernel k;
  k.buffers = {{"in0", BufferKind::Input, Type::F32, 64}, {"out0", BufferKind::Output, Type::F32, 64}};
  Stmt region = region_stmt("stage", false, 64);
  Stmt copy = loop_stmt("i", int_const(0), int_const(64));
  copy.body.push_back(store_stmt("out0", var("i"), load("in0", Type::F32, var("i"))));
  Stmt shift = loop_stmt("j", int_const(1), int_const(64));
  shift.body.push_back(store_stmt(
      "out0", var("j"), binary(Op::Add, load("out0", Type::F32, add(var("j"), -1)), load("in0", Type::F32, var("j")))));
  region.body = {copy, shift};
  k.body = {region};
  const std::string code = render(k, "k");
  const size_t copy_loop = code.find("for (int64_t i = 0;"), shift_loop = code.find("for (int64_t j = 1;");
  ASSERT_NE(copy_loop, std::string::npos) << code;
  ASSERT_NE(shift_loop, std::string::npos) << code;
  EXPECT_NE(code.rfind("#pragma GCC ivdep", copy_loop), std::string::npos) << code;
  EXPECT_EQ(code.find("#pragma GCC ivdep", copy_loop), std::string::npos) << code;  // not on the shift loop
}
TEST(CodegenCpu, ConcatAsTheStoredValue) {
  for (const char* name : {"concat_root_first", "concat_root_middle", "concat_root_last", "concat_root_parallel"}) {
    SCOPED_TRACE(name);
    expect_case(name);
    // One loop nest per input, not a clamped index per input behind a select.
    const std::string code = emit_kernel(suite().cases.at(name).primitives, suite().cases.at(name).group, "k");
    EXPECT_EQ(code.find("std::min<int64_t>(std::max<int64_t>("), std::string::npos) << code;
    EXPECT_NE(code.find(" = Concat ("), code.rfind(" = Concat ("));
  }
}
TEST(CodegenCpu, WhereAndComparisons) { expect_case("where"); }
TEST(CodegenCpu, MultiOutputGroup) { expect_case("multi_output"); }
TEST(CodegenCpu, OddShapes) { expect_case("odd_shapes"); }
TEST(CodegenCpu, ReductionsInPlace) { expect_case("reductions_in_place"); }
TEST(CodegenCpu, ParallelStages) {
  expect_case("parallel_softmax");
  expect_case("parallel_row");
}

// Max and reductions propagate NaN like the interpreter's primitives (the
// ONNX-level MaxPool of the interpreter may skip NaN: fission's business).
TEST(CodegenCpu, NaNPropagates) {
  const Case& c = suite().cases.at("maxpool3");
  std::map<std::string, Tensor> feeds = uniform_feeds(c.original, 9);
  Tensor& x = feeds.begin()->second;
  x.data<float>()[0] = std::nanf("");
  x.data<float>()[37] = std::nanf("");
  expect_program_matches(c.primitives, program_of(c), feeds);
  const Case& m = suite().cases.at("odd_shapes");
  feeds = uniform_feeds(m.original, 4);
  feeds.begin()->second.data<float>()[5] = std::nanf("");
  expect_program_matches(m.primitives, program_of(m), feeds);
  // In-place folds: a NaN among the 16-lane vectors of one row, one in the
  // tail of another.
  const Case& r = suite().cases.at("reductions_in_place");
  feeds = uniform_feeds(r.original, 6);
  feeds.begin()->second.data<float>()[5] = std::nanf("");
  feeds.begin()->second.data<float>()[19 * 40 + 17] = std::nanf("");
  expect_program_matches(r.primitives, program_of(r), feeds);
}

// A model's repeated blocks give kernels whose code is the same but for
// comments: the library defines it once and aliases the other symbols to it;
// a kernel over other shapes keeps code of its own. Every kernel still
// computes its own buffers.
TEST(CodegenCpu, IdenticalKernelsShareOneDefinition) {
  GraphBuilder b;
  const ValueId x = b.input("x", {4, 7}), y = b.input("y", {4, 7}), z = b.input("z", {5, 3});
  const auto branch = [&](ValueId v) { return b.op("Tanh", {b.op("Relu", {v})}); };
  const ValueId ox = branch(x), oy = branch(y), oz = branch(z);
  Graph original = b.finish(ox);
  original.outputs().push_back(oy);
  original.outputs().push_back(oz);
  runtime::Program program;
  program.graph = fission::fission(original);
  ASSERT_EQ(program.graph.nodes().size(), 6u);
  for (size_t k = 0; k < 3; ++k) {
    program.kernels.push_back(runtime::make_group(program.graph, {2 * k, 2 * k + 1}));
    program.kernels.back().symbol = "kernel_branch" + std::to_string(k);
  }
  program.generated_source = emit_library(program.graph, program.kernels);
  const std::string& source = program.generated_source;
  EXPECT_NE(source.find("void kernel_branch1(const void* const* inputs, void* const* outputs) "
                        "__attribute__((alias(\"kernel_branch0\")));"),
            std::string::npos)
      << source;
  EXPECT_NE(source.find("void kernel_branch2(const void* const* inputs, void* const* outputs) {"), std::string::npos);
  EXPECT_EQ(source.find("void kernel_branch1(const void* const* inputs, void* const* outputs) {"), std::string::npos);
  const BuildResult library = build_library(source, temp_dir().string());
  program.library_path = library.library_path;
  program.library_sha256 = library.sha256;
  const std::vector<std::string> kinds =
      expect_program_matches(original, std::move(program), uniform_feeds(original, 6));
  EXPECT_EQ(kinds, (std::vector<std::string>{"generated", "generated", "generated"}));
}

TEST(CodegenCpu, CanFuseRejects) {
  Graph mm = one_node_graph("MatMul", {var({2, 3}), var({3, 4})});
  EXPECT_FALSE(can_fuse(mm, mm.nodes()[0]));
  Graph add_int = one_node_graph("Add", {var({4}, DType::Int64), var({4}, DType::Int64)});
  EXPECT_FALSE(can_fuse(add_int, add_int.nodes()[0]));
  Graph prod = one_node_graph("ReduceProd", {var({4, 5}), ints({1})});
  EXPECT_FALSE(can_fuse(prod, prod.nodes()[0]));
  Graph dynamic_gather = one_node_graph("Gather", {var({4, 5}), var({3}, DType::Int64)});
  EXPECT_FALSE(can_fuse(dynamic_gather, dynamic_gather.nodes()[0]));
  Graph relu = one_node_graph("Relu", {var({4, 5})});
  EXPECT_TRUE(can_fuse(relu, relu.nodes()[0]));
}

TEST(CodegenCpu, BuildLibraryCaches) {
  const std::string dir = (temp_dir() / "cache-test").string();
  const std::string source = "extern \"C\" int orchid_cache_probe() { return 42; }\n";
  BuildResult first = build_library(source, dir);
  EXPECT_FALSE(first.cached);
  EXPECT_TRUE(fs::is_regular_file(first.library_path));
  BuildResult second = build_library(source, dir);
  EXPECT_TRUE(second.cached);
  EXPECT_EQ(first.library_path, second.library_path);
  EXPECT_EQ(first.sha256.size(), 64u);
  EXPECT_EQ(second.sha256, first.sha256);
  EXPECT_TRUE(fs::is_regular_file(first.library_path + ".sha256"));
}

// A cached library whose bytes changed (corruption, or someone else's code)
// is not reused: it is built again, and the old bytes never loaded.
// The prelude before kPreludeEnd becomes a precompiled header kept beside
// the libraries with its SHA-256; a header that no longer matches its record
// is built again, and the libraries built on it still work.
TEST(CodegenCpu, PreludeIsAPrecompiledHeaderCheckedBeforeUse) {
  const fs::path dir = temp_dir() / "pch-test";
  const std::string prelude = "static inline int orchid_pch_probe_base() { return 40; }\n";
  const auto library_source = [&](int k) {
    return prelude + kPreludeEnd + "extern \"C\" int orchid_pch_probe() { return orchid_pch_probe_base() + " +
           std::to_string(k) + "; }\n";
  };
  const auto probe = [](const BuildResult& built) {
    runtime::cpu::SharedLibrary library(built.library_path, built.sha256);
    return reinterpret_cast<int (*)()>(library.function("orchid_pch_probe"))();
  };
  EXPECT_EQ(probe(build_library(library_source(2), dir.string())), 42);
  std::vector<fs::path> headers;
  for (const auto& entry : fs::directory_iterator(dir / "kernels")) {
    if (entry.path().filename().string().rfind("prelude-", 0) == 0) headers.push_back(entry.path() / "prelude.h.gch");
  }
  ASSERT_EQ(headers.size(), 1u);
  ASSERT_TRUE(fs::is_regular_file(headers[0]));
  EXPECT_TRUE(fs::is_regular_file(headers[0].string() + ".sha256"));
  std::ofstream(headers[0], std::ios::binary | std::ios::trunc) << "not the header that was built";
  EXPECT_EQ(probe(build_library(library_source(3), dir.string())), 43);
  EXPECT_EQ(sha256_of_file(headers[0].string()), [&] {
    std::ifstream record(headers[0].string() + ".sha256");
    return std::string((std::istreambuf_iterator<char>(record)), std::istreambuf_iterator<char>());
  }());
}

TEST(CodegenCpu, ChangedCachedLibraryIsBuiltAgain) {
  const std::string dir = (temp_dir() / "tamper-test").string();
  const std::string source = "extern \"C\" int orchid_tamper_probe() { return 7; }\n";
  BuildResult first = build_library(source, dir);
  std::ofstream(first.library_path, std::ios::binary | std::ios::app) << "tampered";
  BuildResult again = build_library(source, dir);
  EXPECT_FALSE(again.cached);
  EXPECT_EQ(again.sha256, first.sha256);
}

// Loading checks the library against the SHA-256 recorded when it was built.
TEST(CodegenCpu, LibraryNotMatchingItsHashIsNotLoaded) {
  const Case& c = suite().cases.at("where");
  runtime::Program program = program_of(c);
  program.library_sha256 = std::string(64, '0');
  try {
    runtime::Executable executable{program};
    FAIL() << "expected orchid::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("changed since it was built"), std::string::npos) << e.what();
  }
}

// Orchid generated the source: a compile error is Orchid's bug (exit 3).
TEST(CodegenCpu, CompilerErrorIsAnInternalError) {
  try {
    build_library("this is not C++;\n", (temp_dir() / "error-test").string());
    FAIL() << "expected orchid::InternalError";
  } catch (const InternalError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("compiling generated kernels failed"), std::string::npos) << message;
    EXPECT_NE(message.find(".cc"), std::string::npos) << message;
  }
}

TEST(CodegenCpu, MissingLibraryIsAnOrchidError) {
  const Case& c = suite().cases.at("where");
  runtime::Program program = program_of(c, "", BuildResult{});
  EXPECT_THROW(runtime::Executable{program}, Error);
  program.library_path = (temp_dir() / "no-such.so").string();
  EXPECT_THROW(runtime::Executable{program}, Error);
}

TEST(CodegenCpu, ArtifactRoundTrip) {
  const Case& c = suite().cases.at("softmax_last");
  const fs::path dir = temp_dir() / "artifact";
  runtime::save_artifact(program_of(c), {"softmax.onnx"}, dir.string());
  EXPECT_TRUE(fs::is_regular_file(dir / "kernels.so"));
  EXPECT_TRUE(fs::is_regular_file(dir / "kernels.cc"));
  runtime::Program loaded = runtime::load_artifact(dir.string());
  ASSERT_EQ(loaded.kernels.size(), 1u);
  EXPECT_EQ(loaded.kernels[0].symbol, c.group.symbol);
  EXPECT_EQ(loaded.library_path, fs::absolute(dir / "kernels.so").string());
  std::vector<std::string> kinds = expect_program_matches(c.original, std::move(loaded), uniform_feeds(c.original, 2));
  EXPECT_EQ(kinds, std::vector<std::string>{"generated"});
  // An artifact is code: a kernels.so changed after compile is refused.
  std::ofstream(dir / "kernels.so", std::ios::binary | std::ios::app) << "tampered";
  try {
    runtime::Executable executable{runtime::load_artifact(dir.string())};
    FAIL() << "expected orchid::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("changed since it was built"), std::string::npos) << e.what();
  }
  fs::remove(dir / "kernels.so");
  try {
    runtime::load_artifact(dir.string());
    FAIL() << "expected orchid::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("kernels.so"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace orchid::codegen::cpu

namespace orchid::codegen::cpu {
namespace {

// Micro benchmark, not part of the default run
// (--gtest_also_run_disabled_tests): fused generated kernels against one
// library kernel per primitive.
// The kernels' own time (not the run's allocation of its output tensors).
double best_seconds(runtime::Executable& executable, const std::map<std::string, Tensor>& feeds) {
  double best = 1e9;
  std::vector<double> kernel_seconds;
  for (int k = 0; k < 30; ++k) {
    executable.run(feeds, &kernel_seconds);
    best = std::min(best, std::accumulate(kernel_seconds.begin(), kernel_seconds.end(), 0.0));
  }
  return best;
}

TEST(CodegenCpu, DISABLED_Benchmark) {
  std::vector<std::pair<std::string, Graph>> graphs;
  graphs.emplace_back("softmax_1024x1000", softmax({1024, 1000}, -1));
  graphs.emplace_back("layernorm_512x768", one_node_graph("LayerNormalization", {var({512, 768}), var({768}), var({768})},
                                                          attrs({{"axis", int64_t(-1)}})));
  graphs.emplace_back("maxpool3_1x64x112x112", pool("MaxPool", {1, 64, 112, 112}, 3, 1));
  graphs.emplace_back("elementwise_2x64x56x56", [] {
    GraphBuilder b;
    ValueId x = b.input("x", {2, 64, 56, 56});
    ValueId t = b.op("Add", {b.op("Mul", {x, b.constant({64, 1, 1})}), b.constant({64, 1, 1})});
    return b.finish(b.op("Mul", {t, b.op("Sigmoid", {t})}));
  }());
  graphs.emplace_back("mish_1x64x128x128", mish({1, 64, 128, 128}));
  graphs.emplace_back("maxpool13_1x128x20x20", pool("MaxPool", {1, 128, 20, 20}, 13, 6));
  graphs.emplace_back("maxpool5_1x64x52x52", pool("MaxPool", {1, 64, 52, 52}, 5, 2));
  graphs.emplace_back("bilinear_x4_1x64x32x32", one_node_graph("Resize", {var({1, 64, 32, 32}), none(),
                                                                          cst(DType::Float32, {4}, std::vector<float>{1, 1, 4, 4})},
                                                               attrs({{"mode", std::string("linear")}})));
  graphs.emplace_back("nearest_x2_1x64x64x64", one_node_graph("Resize", {var({1, 64, 64, 64}), none(),
                                                                         cst(DType::Float32, {4}, std::vector<float>{1, 1, 2, 2})},
                                                              attrs({{"mode", std::string("nearest")}})));
  std::vector<Case> cases;
  std::string source = emit_library(Graph(), {});
  for (auto& [name, g] : graphs) {
    cases.push_back(make_case(name, g));
    source += emit_kernel(cases.back().primitives, cases.back().group, cases.back().group.symbol);
  }
  if (const char* dump = std::getenv("ORCHID_DUMP_CODEGEN")) std::ofstream(dump) << source;
  BuildResult library = build_library(source, temp_dir().string());
  std::cout << "[bench] compile " << library.seconds << " s\n";
  for (const Case& c : cases) {
    std::map<std::string, Tensor> feeds = uniform_feeds(c.original, 1);
    runtime::Program fused = program_of(c, source, library);
    runtime::Program unfused = program_of(c, "", BuildResult{});
    unfused.kernels.clear();
    for (size_t i = 0; i < c.primitives.nodes().size(); ++i) unfused.kernels.push_back(runtime::make_group(c.primitives, {i}));
    runtime::Executable a(std::move(fused)), b(std::move(unfused));
    std::cout << "[bench] " << c.group.symbol << ": generated " << best_seconds(a, feeds) * 1e3 << " ms, "
              << c.primitives.nodes().size() << " library kernels " << best_seconds(b, feeds) * 1e3 << " ms\n";
  }
}

}  // namespace
}  // namespace orchid::codegen::cpu
