// The layout kernels (runtime/kernels/cpu/layout.cc, layout_strided_copy.cc)
// against the interpreter: Transpose, Reshape, Slice, Concat, Pad, Expand and
// Gather over every element size (bool/uint8, float16, float32, int64), with
// empty tensors and negative axes, each asserting that the layout kernel (not
// the reference one) ran.
#include "runtime_test_util.h"
#include "support/parallel.h"

namespace orchid::runtime {
namespace {

using namespace testing;  // NOLINT

// One dtype per element size.
const DType kDTypes[] = {DType::Float32, DType::Int64, DType::Bool, DType::UInt8, DType::Float16};

void expect_layout_kernel(const Graph& g, const std::map<std::string, Tensor>& feeds) {
  // Bytes are moved, not computed: outputs must be exact.
  std::vector<std::string> implementations = expect_runtime_matches(g, feeds, {}, 0, 0);
  ASSERT_EQ(implementations.size(), 1u);
  EXPECT_EQ(implementations[0].rfind("layout", 0), 0u) << implementations[0];
}

void expect_layout_kernel(const Graph& g, uint32_t seed = 5) {
  expect_layout_kernel(g, uniform_feeds(g, seed, -100, 100));
}

TEST(LayoutKernel, Transpose) {
  struct Case {
    Shape shape;
    std::vector<int64_t> perm;
  };
  std::vector<Case> cases = {
      {{1, 64, 56, 56}, {0, 2, 3, 1}},  // NCHW -> NHWC: a tiled 2-D transpose
      {{2, 5, 7, 3}, {0, 3, 1, 2}},     // NHWC -> NCHW, small channel count
      {{4, 3, 5, 6}, {0, 2, 1, 3}},     // contiguous inner run: memcpy rows
      {{33, 65}, {1, 0}},               // partial tiles on both sides
      {{3, 129, 64}, {0, 2, 1}},        // batched [129, 64]: 8x8 register blocks, an odd edge
      {{2, 13, 20}, {0, 2, 1}},         // blocks and element loops on both edges
      {{2, 3, 4, 5}, {3, 2, 1, 0}},
      {{2, 3, 4}, {-1, 0, -2}},  // negative perm entries
      {{3, 1, 4}, {1, 2, 0}},
      {{5}, {0}},
      {{3, 0, 4}, {2, 0, 1}},
  };
  for (DType dtype : kDTypes) {
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " " + shape_to_string(c.shape) + " perm " +
                   shape_to_string(c.perm));
      expect_layout_kernel(one_node_graph("Transpose", {var(c.shape, dtype)}, attrs({{"perm", c.perm}})));
    }
    expect_layout_kernel(one_node_graph("Transpose", {var({2, 3, 4}, dtype)}));  // default: reversed axes
  }
}

TEST(LayoutKernel, Reshape) {
  for (DType dtype : kDTypes) {
    expect_layout_kernel(one_node_graph("Reshape", {var({2, 3, 4}, dtype), ints({4, -1})}));
    expect_layout_kernel(one_node_graph("Reshape", {var({300, 400}, dtype), ints({0, 20, 20})}));
    expect_layout_kernel(
        one_node_graph("Reshape", {var({0, 4}, dtype), ints({4, 0})}, attrs({{"allowzero", int64_t(1)}})));
  }
}

Graph slice_graph(Shape shape, DType dtype, std::vector<int64_t> starts, std::vector<int64_t> ends,
                  std::vector<int64_t> axes, std::vector<int64_t> steps) {
  return one_node_graph("Slice", {var(std::move(shape), dtype), ints(starts), ints(ends), ints(axes), ints(steps)});
}

TEST(LayoutKernel, Slice) {
  for (DType dtype : kDTypes) {
    SCOPED_TRACE(dtype_name(dtype));
    expect_layout_kernel(slice_graph({6, 7, 8}, dtype, {1, 2}, {5, -1}, {0, 2}, {1, 1}));
    expect_layout_kernel(slice_graph({6, 7, 8}, dtype, {0}, {3}, {-1}, {1}));                    // inner slice
    expect_layout_kernel(slice_graph({6, 7, 8}, dtype, {5, -1}, {-100, 0}, {0, 1}, {-2, -1}));   // reversed
    expect_layout_kernel(slice_graph({6, 7, 8}, dtype, {-3, 100}, {1000, 2}, {2, 1}, {2, -3}));  // clamped
    expect_layout_kernel(slice_graph({6, 7, 8}, dtype, {4}, {2}, {1}, {1}));                     // empty
    expect_layout_kernel(slice_graph({6, 0, 8}, dtype, {1}, {4}, {0}, {1}));                     // empty input
    expect_layout_kernel(slice_graph({10, 4}, dtype, {0}, {10}, {0}, {3}));
  }
  // Without the optional axes and steps inputs.
  expect_layout_kernel(one_node_graph("Slice", {var({5, 6}), ints({1, -4}), ints({4, 6})}));
}

TEST(LayoutKernel, Concat) {
  for (DType dtype : kDTypes) {
    for (int64_t axis : {0, 1, 2, -1}) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " axis " + std::to_string(axis));
      Shape a = {2, 3, 4}, b = a, c = a;
      size_t d = size_t(axis < 0 ? axis + 3 : axis);
      b[d] = 1;
      c[d] = 0;
      expect_layout_kernel(one_node_graph("Concat", {var(a, dtype), var(b, dtype), var(c, dtype), var(a, dtype)},
                                          attrs({{"axis", axis}})));
    }
  }
  // One value concatenated with itself and with a constant.
  Graph g;
  ValueId x = g.add_value("x", {DType::Float32, {2, 3}});
  g.inputs().push_back(x);
  ValueId k = g.add_constant("k", random_tensor(DType::Float32, {1, 3}, 9));
  g.outputs().push_back(add_op(g, "Concat", {x, k, x}, attrs({{"axis", int64_t(0)}}))[0]);
  expect_layout_kernel(g);
}

Graph pad_graph(Shape shape, DType dtype, std::vector<int64_t> pads, std::optional<Tensor> value = std::nullopt,
                std::optional<std::vector<int64_t>> axes = std::nullopt) {
  std::vector<Input> inputs = {var(std::move(shape), dtype), ints(pads)};
  if (value || axes) inputs.push_back(value ? cst(*value) : none());
  if (axes) inputs.push_back(ints(*axes));
  return one_node_graph("Pad", inputs);
}

TEST(LayoutKernel, Pad) {
  for (DType dtype : kDTypes) {
    SCOPED_TRACE(dtype_name(dtype));
    Tensor value = Tensor::from_vector(dtype, {}, std::vector<double>{7});
    expect_layout_kernel(pad_graph({2, 3, 4}, dtype, {0, 1, 2, 0, 2, 1}));
    expect_layout_kernel(pad_graph({2, 3, 4}, dtype, {0, 1, 2, 0, 2, 1}, value));
    expect_layout_kernel(pad_graph({2, 3, 4}, dtype, {1, -1, 0, -1, 2, -2}, value));  // crops
    expect_layout_kernel(pad_graph({2, 3, 4}, dtype, {2, 1}, value, std::vector<int64_t>{-1}));
    expect_layout_kernel(pad_graph({2, 3, 4}, dtype, {0, 0, 0, 0, 0, 0}));
    expect_layout_kernel(pad_graph({2, 0, 4}, dtype, {0, 1, 0, 0, 1, 0}, value));  // empty input
    expect_layout_kernel(pad_graph({2, 3}, dtype, {0, -3, 0, 0}));                 // empty output
  }
  // A float constant_value for an int64 input is cast, as the importer's rewrite expects.
  expect_layout_kernel(pad_graph({3, 3}, DType::Int64, {1, 1, 1, 1}, Tensor::scalar_f32(-4.75f)));
  expect_layout_kernel(pad_graph({1, 64, 56, 56}, DType::Float32, {0, 0, 1, 1, 0, 0, 1, 1}));
}

TEST(LayoutKernel, Expand) {
  for (DType dtype : kDTypes) {
    SCOPED_TRACE(dtype_name(dtype));
    expect_layout_kernel(one_node_graph("Expand", {var({3, 1}, dtype), ints({3, 5})}));
    expect_layout_kernel(one_node_graph("Expand", {var({1, 5}, dtype), ints({4, 5})}));
    expect_layout_kernel(one_node_graph("Expand", {var({3, 1, 2}, dtype), ints({2, 1, 4, 2})}));
    expect_layout_kernel(one_node_graph("Expand", {var({4}, dtype), ints({2, 3, 1})}));
    expect_layout_kernel(one_node_graph("Expand", {var({}, dtype), ints({2, 3})}));
    expect_layout_kernel(one_node_graph("Expand", {var({2, 1}, dtype), ints({2, 0})}));
  }
}

TEST(LayoutKernel, Gather) {
  for (DType dtype : kDTypes) {
    for (DType index_dtype : {DType::Int32, DType::Int64}) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " " + dtype_name(index_dtype));
      // Runtime indices, negatives included.
      for (int64_t axis : {0, 1, -1}) {
        Graph g = one_node_graph("Gather", {var({4, 5, 6}, dtype), var({2, 3}, index_dtype)}, attrs({{"axis", axis}}));
        std::map<std::string, Tensor> feeds = uniform_feeds(g, 3, -4, 4);
        expect_layout_kernel(g, feeds);
      }
      // Constant indices, a scalar index, and an empty index list.
      Tensor idx = Tensor::from_vector(index_dtype, {3}, std::vector<int64_t>{2, -1, 0});
      expect_layout_kernel(one_node_graph("Gather", {var({5, 3}, dtype), cst(idx)}, attrs({{"axis", int64_t(1)}})));
      expect_layout_kernel(one_node_graph("Gather", {var({5, 3}, dtype), cst(Tensor::scalar_i64(-2))}));
      expect_layout_kernel(one_node_graph("Gather", {var({5, 3}, dtype), var({0}, index_dtype)}));
      // Constant tables as fission makes them: a reflect pad (runs of
      // consecutive indices, copied whole) and a nearest x2 upsample (single
      // elements), along the last axis and a middle one.
      std::vector<int64_t> reflect = {1, 0};
      for (int64_t i = 0; i < 31; ++i) reflect.push_back(i);
      reflect.insert(reflect.end(), {29, 28});
      std::vector<int64_t> upsample;
      for (int64_t i = 0; i < 62; ++i) upsample.push_back(i / 2);
      // Sixteen outputs from within sixteen elements (one vector load and a
      // permute): a x3 upsample, and blocks read backwards.
      std::vector<int64_t> triple, backwards;
      for (int64_t i = 0; i < 93; ++i) triple.push_back(i / 3);
      for (int64_t i = 0; i < 40; ++i) backwards.push_back(std::min<int64_t>(30, (i / 16) * 8 + 15 - i % 16));
      for (const auto& table : {reflect, upsample, triple, backwards}) {
        const Tensor t = Tensor::from_vector(index_dtype, {int64_t(table.size())}, table);
        for (int64_t axis : {1, -1}) {
          Shape shape = {3, 4, 31};
          if (axis == 1) shape = {3, 31, 5};
          expect_layout_kernel(one_node_graph("Gather", {var(shape, dtype), cst(t)}, attrs({{"axis", axis}})));
        }
      }
    }
  }
}

TEST(LayoutKernel, GatherIndexOutOfRangeIsAUserError) {
  Graph g = one_node_graph("Gather", {var({4, 3}), var({2}, DType::Int64)});
  Program program{g, {make_group(g, {0})}};
  Executable executable(std::move(program));
  Tensor data = random_tensor(DType::Float32, {4, 3}, 1);
  EXPECT_THROW(executable.run({{"in0", data}, {"in1", Tensor::vector_i64({1, 4})}}), Error);
  EXPECT_THROW(executable.run({{"in0", data}, {"in1", Tensor::vector_i64({-5, 0})}}), Error);
  EXPECT_NO_THROW(executable.run({{"in0", data}, {"in1", Tensor::vector_i64({-4, 3})}}));
}

TEST(LayoutKernel, BigCopiesAgreeAcrossThreads) {
  int before = num_threads();
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    expect_layout_kernel(
        one_node_graph("Transpose", {var({3, 130, 257})}, attrs({{"perm", std::vector<int64_t>{2, 0, 1}}})));
    expect_layout_kernel(slice_graph({400, 300}, DType::Float32, {399, 1}, {-1000, 299}, {0, 1}, {-1, 2}));
    expect_layout_kernel(one_node_graph("Reshape", {var({512, 512}), ints({-1})}));
    expect_layout_kernel(one_node_graph("Expand", {var({1, 300}), ints({500, 300})}));
  }
  set_num_threads(before);
}

// Outputs of kStreamingBytes and more are written with streaming stores:
// a banded Gather of runs (Longformer's keys, 33 MB), a Concat along the
// last axis whose rows start off the 64-byte lines (24 MB), one long run
// (a Reshape, 17 MB), at 1 and 2 threads.
TEST(LayoutKernel, StreamedCopiesOfLargeOutputs) {
  int before = num_threads();
  std::vector<int64_t> band;
  for (int64_t i = 0; i < 1024; ++i) {
    for (int64_t j = 0; j < 129; ++j) band.push_back(i + j);
  }
  const Tensor indices = Tensor::from_vector(DType::Int64, {1024, 129}, band);
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    expect_layout_kernel(one_node_graph("Gather", {var({1, 1152, 64}), cst(indices)}, attrs({{"axis", int64_t(1)}})));
    expect_layout_kernel(
        one_node_graph("Concat", {var({3, 1000003}), var({3, 999999})}, attrs({{"axis", int64_t(1)}})));
    expect_layout_kernel(one_node_graph("Reshape", {var({4100, 1050}), ints({-1})}));
  }
  set_num_threads(before);
}

}  // namespace
}  // namespace orchid::runtime
