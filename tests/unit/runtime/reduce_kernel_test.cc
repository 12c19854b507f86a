// The reduce kernels (runtime/kernels/cpu/reduce.cc, reduce_axis.cc) against
// the interpreter: ReduceSum/Max/Min/Prod over contiguous and scattered axes,
// ArgMax/ArgMin and CumSum, for float and integer dtypes, empty tensors and
// NaN, each asserting that the reduce kernel (not the reference one) ran.
#include <cmath>
#include <limits>

#include "runtime_test_util.h"
#include "support/parallel.h"

namespace orchid::runtime {
namespace {

using namespace testing;  // NOLINT

// Runs `g` (one node) and expects the interpreter's outputs from the reduce
// kernel. Floats sum in double like the interpreter, hence the tight rtol.
void expect_reduce_kernel(const Graph& g, const std::map<std::string, Tensor>& feeds, double rtol = 1e-5) {
  std::vector<std::string> implementations = expect_runtime_matches(g, feeds, {}, rtol, 1e-6);
  ASSERT_EQ(implementations.size(), 1u);
  EXPECT_EQ(implementations[0].rfind("reduce", 0), 0u) << implementations[0];
}

void expect_reduce_kernel(const Graph& g, uint32_t seed = 5, double lo = -3, double hi = 3) {
  expect_reduce_kernel(g, uniform_feeds(g, seed, lo, hi));
}

Graph reduce_graph(const char* op, Shape shape, DType dtype, std::vector<int64_t> axes, int64_t keepdims = 1) {
  return one_node_graph(op, {var(std::move(shape), dtype), ints(axes)}, attrs({{"keepdims", keepdims}}));
}

// Every subset of axes of a rank-3 and a rank-4 shape, in both keepdims forms:
// contiguous runs (dense rows, blocked inner) and scattered axes.
TEST(ReduceKernel, AllAxisSubsetsMatchInterpreter) {
  for (const char* op : {"ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd"}) {
    for (Shape shape : {Shape{3, 4, 5}, Shape{2, 3, 7, 9}}) {
      int64_t rank = int64_t(shape.size());
      for (int64_t bits = 1; bits < (int64_t(1) << rank); ++bits) {
        std::vector<int64_t> axes;
        for (int64_t d = 0; d < rank; ++d) {
          if (bits >> d & 1) axes.push_back(d);
        }
        SCOPED_TRACE(std::string(op) + " " + shape_to_string(shape) + " axes " + shape_to_string(axes));
        expect_reduce_kernel(reduce_graph(op, shape, DType::Float32, axes, bits & 1), 5, -1.5, 1.5);
      }
    }
  }
}

TEST(ReduceKernel, LastAxisAndGlobalPoolShapes) {
  // Softmax/layernorm rows (tails of the 16 lanes included) and global pooling.
  expect_reduce_kernel(reduce_graph("ReduceSum", {512, 768}, DType::Float32, {-1}));
  expect_reduce_kernel(reduce_graph("ReduceMax", {12, 128, 128}, DType::Float32, {-1}));
  expect_reduce_kernel(reduce_graph("ReduceSum", {7, 33}, DType::Float32, {1}, 0));
  expect_reduce_kernel(reduce_graph("ReduceMin", {5, 17}, DType::Float32, {-1}));
  expect_reduce_kernel(reduce_graph("ReduceSum", {2, 64, 7, 7}, DType::Float32, {-2, -1}));
  expect_reduce_kernel(reduce_graph("ReduceMax", {1, 3, 600}, DType::Float32, {1}));  // inner over 2 blocks
  expect_reduce_kernel(reduce_graph("ReduceSum", {300, 5}, DType::Float32, {0}));
  expect_reduce_kernel(reduce_graph("ReduceSum", {4, 6}, DType::Float64, {1}));
}

TEST(ReduceKernel, SizeOneAxesAreDropped) {
  expect_reduce_kernel(reduce_graph("ReduceSum", {1, 5, 1, 6}, DType::Float32, {1, 2}));
  expect_reduce_kernel(reduce_graph("ReduceMax", {3, 1}, DType::Float32, {1}, 0));
  expect_reduce_kernel(reduce_graph("ReduceSum", {1, 1}, DType::Float32, {0, 1}, 0));
}

TEST(ReduceKernel, IntegersWrapAround) {
  for (DType dtype : {DType::Int32, DType::Int64}) {
    for (const char* op : {"ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd"}) {
      SCOPED_TRACE(std::string(op) + " " + dtype_name(dtype));
      expect_reduce_kernel(reduce_graph(op, {6, 40}, dtype, {-1}), 3, -100, 100);
      expect_reduce_kernel(reduce_graph(op, {6, 5, 4}, dtype, {0, 2}), 3, -100, 100);
      expect_reduce_kernel(reduce_graph(op, {9, 300}, dtype, {0}), 3, -100, 100);
    }
  }
  // int32 sums far past 2^31 wrap like the interpreter's.
  expect_reduce_kernel(reduce_graph("ReduceSum", {4, 64}, DType::Int32, {1}), 4, 1e9, 2e9);
}

TEST(ReduceKernel, EmptyTensors) {
  for (const char* op : {"ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd"}) {
    SCOPED_TRACE(op);
    // Reducing an empty axis gives the identity (0, -inf, +inf, 1).
    expect_reduce_kernel(reduce_graph(op, {4, 0}, DType::Float32, {1}));
    expect_reduce_kernel(reduce_graph(op, {3, 0, 2}, DType::Float32, {1}));
    expect_reduce_kernel(reduce_graph(op, {3, 0, 2}, DType::Int64, {1}));
    // An empty kept axis gives an empty output.
    expect_reduce_kernel(reduce_graph(op, {0, 5}, DType::Float32, {1}));
  }
}

TEST(ReduceKernel, MaxAndMinPropagateNaN) {
  Graph g = reduce_graph("ReduceMax", {3, 20}, DType::Float32, {1});
  Tensor x = random_tensor(DType::Float32, {3, 20}, 1);
  x.data<float>()[5] = std::numeric_limits<float>::quiet_NaN();   // row 0, mid-lane
  x.data<float>()[59] = std::numeric_limits<float>::quiet_NaN();  // row 2, tail
  expect_reduce_kernel(g, {{"in0", x}});
  expect_reduce_kernel(reduce_graph("ReduceMin", {3, 20}, DType::Float32, {1}), {{"in0", x}});
  Tensor y = random_tensor(DType::Float32, {20, 3}, 1);
  y.data<float>()[4] = std::numeric_limits<float>::quiet_NaN();
  expect_reduce_kernel(reduce_graph("ReduceMax", {20, 3}, DType::Float32, {0}), {{"in0", y}});
}

TEST(ReduceKernel, ManyThreadsAgreeWithOne) {
  int before = num_threads();
  for (int threads : {1, 2, 4}) {
    set_num_threads(threads);
    expect_reduce_kernel(reduce_graph("ReduceSum", {256, 1000}, DType::Float32, {1}));
    expect_reduce_kernel(reduce_graph("ReduceMax", {64, 2000}, DType::Float32, {0}));
    expect_reduce_kernel(one_node_graph("CumSum", {var({300, 400}), cst(Tensor::scalar_i64(0))}));
  }
  set_num_threads(before);
}

// ------------------------------------------------------------ ArgMax / ArgMin
TEST(ReduceArgKernel, AxesKeepdimsAndTies) {
  for (const char* op : {"ArgMax", "ArgMin"}) {
    for (int64_t axis : {0, 1, 2, -1, -3}) {
      for (int64_t keepdims : {0, 1}) {
        for (int64_t last : {0, 1}) {
          SCOPED_TRACE(std::string(op) + " axis " + std::to_string(axis) + " keepdims " + std::to_string(keepdims) +
                       " select_last " + std::to_string(last));
          Attributes a = attrs({{"axis", axis}, {"keepdims", keepdims}, {"select_last_index", last}});
          expect_reduce_kernel(one_node_graph(op, {var({4, 5, 6})}, a));
          // Small integers tie often: select_last decides.
          expect_reduce_kernel(one_node_graph(op, {var({4, 5, 6}, DType::Int64)}, a), 2, -2, 2);
          expect_reduce_kernel(one_node_graph(op, {var({3, 300, 2}, DType::Int32)}, a), 2, -3, 3);
        }
      }
    }
  }
  expect_reduce_kernel(one_node_graph("ArgMax", {var({2, 600})}, attrs({{"axis", int64_t(0)}})));
}

TEST(ReduceArgKernel, NaNWinsAndEmpty) {
  Tensor x = random_tensor(DType::Float32, {2, 8}, 1);
  x.data<float>()[3] = std::numeric_limits<float>::quiet_NaN();
  x.data<float>()[6] = std::numeric_limits<float>::quiet_NaN();
  for (const char* op : {"ArgMax", "ArgMin"}) {
    for (int64_t last : {0, 1}) {
      Graph g = one_node_graph(op, {var({2, 8})}, attrs({{"axis", int64_t(1)}, {"select_last_index", last}}));
      expect_reduce_kernel(g, {{"in0", x}});
    }
    expect_reduce_kernel(one_node_graph(op, {var({0, 8})}, attrs({{"axis", int64_t(1)}})));
  }
}

// ------------------------------------------------------------ CumSum
TEST(ReduceCumSumKernel, AxesExclusiveReverse) {
  for (int64_t axis : {0, 1, 2, -1}) {
    for (int64_t exclusive : {0, 1}) {
      for (int64_t reverse : {0, 1}) {
        SCOPED_TRACE("axis " + std::to_string(axis) + " exclusive " + std::to_string(exclusive) + " reverse " +
                     std::to_string(reverse));
        Attributes a = attrs({{"exclusive", exclusive}, {"reverse", reverse}});
        expect_reduce_kernel(one_node_graph("CumSum", {var({3, 4, 5}), cst(Tensor::scalar_i64(axis))}, a));
        expect_reduce_kernel(
            one_node_graph("CumSum", {var({3, 4, 5}, DType::Int64), cst(DType::Int32, {1}, std::vector<int>{int(axis)})}, a),
            3, -50, 50);
        expect_reduce_kernel(one_node_graph("CumSum", {var({2, 300}, DType::Int32), cst(Tensor::scalar_i64(axis % 2))}, a),
                             3, 1e9, 2e9);
      }
    }
  }
  expect_reduce_kernel(one_node_graph("CumSum", {var({3, 0}), cst(Tensor::scalar_i64(1))}));
  expect_reduce_kernel(one_node_graph("CumSum", {var({0, 3}), cst(Tensor::scalar_i64(1))}));
}

TEST(ReduceCumSumKernel, RuntimeAxisFallsBackToReference) {
  Graph g = one_node_graph("CumSum", {var({3, 4}), var({}, DType::Int64)});
  std::map<std::string, Tensor> feeds = {{"in0", random_tensor(DType::Float32, {3, 4}, 1)},
                                         {"in1", Tensor::scalar_i64(1)}};
  std::vector<std::string> implementations = expect_runtime_matches(g, feeds);
  ASSERT_EQ(implementations.size(), 1u);
  EXPECT_EQ(implementations[0], "reference");
}

TEST(ReduceKernel, UnsupportedDtypeFallsBackToReference) {
  Graph g = reduce_graph("ReduceSum", {3, 4}, DType::Float16, {1});
  std::vector<std::string> implementations = expect_runtime_matches(g, uniform_feeds(g, 1), {}, 1e-2, 1e-2);
  ASSERT_EQ(implementations.size(), 1u);
  EXPECT_EQ(implementations[0], "reference");
}

}  // namespace
}  // namespace orchid::runtime
