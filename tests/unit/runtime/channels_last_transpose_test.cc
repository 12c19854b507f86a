// Transposes between channels-last and channels-first images
// (channels_last_transpose.cc): copies between row-major kernels,
// relabelings of one buffer next to convolutions computing channels-last,
// always the interpreter's results.
#include "runtime/kernels/cpu/registry.h"
#include "runtime_test_util.h"

namespace orchid::runtime {
namespace {

using namespace testing;  // NOLINT
using ints = std::vector<int64_t>;

struct Builder : GraphBuilder {
  Builder() { seed = 5; }
};

// x [1, h, w, c] -> Relu -> to channels-first -> Conv (c -> c, 3x3, `group`)
// -> to channels-last -> Relu, one kernel per node.
Graph token_conv(int64_t h, int64_t w, int64_t c, int64_t group) {
  Builder b;
  ValueId x = b.op("Relu", {b.input("x", {1, h, w, c})});
  x = b.op("Transpose", {x}, attrs({{"perm", ints{0, 3, 1, 2}}}));
  x = b.op("Conv", {x, b.constant({c, c / group, 3, 3}), b.constant({c})},
           attrs({{"pads", ints{1, 1, 1, 1}}, {"group", group}}));
  x = b.op("Transpose", {x}, attrs({{"perm", ints{0, 2, 3, 1}}}));
  return b.finish(b.op("Relu", {x}));
}

TEST(ChannelsLastTranspose, RelabeledBesideConvs) {
  for (const auto& [c, group] : std::vector<std::pair<int64_t, int64_t>>{{16, 16}, {8, 1}, {24, 24}, {32, 4}}) {
    SCOPED_TRACE(std::to_string(c) + " channels, group " + std::to_string(group));
    const Graph g = token_conv(7, 9, c, group);
    const std::vector<std::string> impl = expect_runtime_matches(g, uniform_feeds(g, 3));
    ASSERT_EQ(impl.size(), 5u);
    EXPECT_EQ(impl[1], "layout Transpose (channels-last relabeled)");
    EXPECT_EQ(impl[3], "layout Transpose (channels-last relabeled)");
  }
}

// Between kernels that work row-major only, and for a graph input or
// output, they copy. (A pointwise kernel between two of them would take
// the native layout, and both would relabel.)
TEST(ChannelsLastTranspose, CopiesBetweenRowMajorKernels) {
  Builder b;
  ValueId x = b.op("Transpose", {b.input("x", {2, 3, 4, 5, 6})}, attrs({{"perm", ints{0, 4, 1, 2, 3}}}));
  x = b.op("Softmax", {x});
  const ValueId image = b.op("Transpose", {x}, attrs({{"perm", ints{0, 2, 3, 4, 1}}}));
  const Graph g = b.finish(image);
  const std::vector<std::string> impl = expect_runtime_matches(g, uniform_feeds(g, 4));
  EXPECT_EQ(impl[0], "layout Transpose");
  EXPECT_EQ(impl[2], "layout Transpose");
  EXPECT_TRUE(cpu::channels_last_transpose(g, make_group(g, {0})).has_value());
  EXPECT_EQ(*cpu::channels_last_transpose(g, make_group(g, {2})), cpu::ChannelsLastTranspose::ToChannelsLast);
  EXPECT_FALSE(cpu::channels_last_transpose(g, make_group(g, {1})).has_value());
}

}  // namespace
}  // namespace orchid::runtime
