// Max pooling as one oneDNN kernel: the Pad, Slices and Maxes fission makes
// of a MaxPool are recognized (find_pools) and computed by
// make_pool_kernel, against the interpreter on the MaxPool itself, for
// random 1-D to 3-D windows (strides, dilations, pads, ceil_mode, auto_pad,
// sizes that are not multiples of the vector width), whole or as its
// per-axis stages; in native layouts; and chains that are not pools are
// refused.
#include <gtest/gtest.h>

#include <oneapi/dnnl/dnnl.hpp>

#include <random>

#include "fission/fission.h"
#include "ir/graph_utils.h"
#include "runtime/kernels/cpu/onednn_common.h"
#include "runtime/kernels/cpu/registry.h"
#include "onednn_test_util.h"
#include "runtime_test_util.h"

namespace orchid::runtime {
namespace {

using namespace testing;  // NOLINT
using dnnl::memory;

Graph max_pool(const Shape& shape, Attributes a) { return one_node_graph("MaxPool", {var(shape)}, std::move(a)); }
Graph average_pool(const Shape& shape, Attributes a) {
  return one_node_graph("AveragePool", {var(shape)}, std::move(a));
}

std::vector<size_t> all_nodes(const Graph& g) {
  std::vector<size_t> nodes(g.nodes().size());
  for (size_t i = 0; i < nodes.size(); ++i) nodes[i] = i;
  return nodes;
}

// Random MaxPool / AveragePool attributes for an input of `spatial` axes;
// an average counts the padding or not (not with ceil_mode, whose extension
// no oneDNN average leaves out of a whole window).
Attributes random_window(std::mt19937& rng, const Shape& spatial, bool average) {
  const size_t n = spatial.size();
  std::vector<int64_t> kernel(n), strides(n), dilations(n), pads(2 * n);
  for (size_t j = 0; j < n; ++j) {
    kernel[j] = std::uniform_int_distribution<int64_t>(1, std::min<int64_t>(5, spatial[j]))(rng);
    strides[j] = std::uniform_int_distribution<int64_t>(1, 3)(rng);
    dilations[j] =
        kernel[j] > 1 && (kernel[j] - 1) * 2 < spatial[j] ? std::uniform_int_distribution<int64_t>(1, 2)(rng) : 1;
    const int64_t extent = (kernel[j] - 1) * dilations[j] + 1;
    pads[j] = std::uniform_int_distribution<int64_t>(0, (extent - 1) / 2)(rng);
    pads[j + n] = std::uniform_int_distribution<int64_t>(0, (extent - 1) / 2)(rng);
  }
  if (std::all_of(kernel.begin(), kernel.end(), [](int64_t k) { return k == 1; })) kernel[0] = 2;
  Attributes a = attrs({{"kernel_shape", kernel}, {"strides", strides}, {"dilations", dilations}});
  if (rng() % 4 == 0) {
    a.set("auto_pad", std::string(rng() % 2 ? "SAME_UPPER" : "SAME_LOWER"));
  } else {
    a.set("pads", pads);
    a.set("ceil_mode", int64_t(rng() % 2));
  }
  if (average) {
    const bool ceil = a.get_int("ceil_mode", 0) == 1;
    a.set("count_include_pad", int64_t(ceil ? 0 : rng() % 2));
  }
  return a;
}

TEST(PoolKernel, RandomWindowsMatchTheInterpreter) {
  std::mt19937 rng(17);
  int checked = 0;
  for (int trial = 0; trial < 80; ++trial) {
    const bool average = trial % 2 == 1;
    const size_t spatial = 1 + trial % 3;
    Shape shape = {1 + int64_t(rng() % 2), 1 + int64_t(rng() % 20)};
    for (size_t j = 0; j < spatial; ++j)
      shape.push_back(std::uniform_int_distribution<int64_t>(3, spatial == 3 ? 7 : 19)(rng));
    const Attributes window = random_window(rng, Shape(shape.begin() + 2, shape.end()), average);
    const Graph pool = average ? average_pool(shape, window) : max_pool(shape, window);
    const Graph primitives = fission::fission(pool);
    const std::vector<std::vector<size_t>> sets = cpu::find_pools(primitives, producer_nodes(primitives));
    SCOPED_TRACE(pool.nodes()[0].describe() + " on " + shape_to_string(shape));
    // The whole window is one set, and one kernel.
    std::string ops;
    for (const Node& node : primitives.nodes()) ops += node.op + " ";
    ASSERT_NE(std::find(sets.begin(), sets.end(), all_nodes(primitives)), sets.end()) << ops;
    Program whole;
    whole.graph = primitives;
    whole.kernels.push_back(make_group(primitives, all_nodes(primitives)));
    const auto feeds = uniform_feeds(pool, uint32_t(trial));
    const std::vector<std::string> ran = expect_program_matches(pool, std::move(whole), feeds);
    ASSERT_EQ(ran.size(), 1u);
    EXPECT_EQ(ran[0].rfind("onednn pool", 0), 0u) << ran[0];
    // Folded one axis at a time: each stage a set of its own too, and the
    // stages as kernels.
    std::vector<std::vector<size_t>> stages;
    for (const std::vector<size_t>& set : sets) {
      if (set != all_nodes(primitives)) stages.push_back(set);
    }
    if (stages.size() >= 2) {
      Program staged;
      staged.graph = primitives;
      std::vector<bool> covered(primitives.nodes().size(), false);
      for (const std::vector<size_t>& set : stages) {
        if (std::any_of(set.begin(), set.end(), [&](size_t n) { return covered[n]; })) continue;
        for (size_t n : set) covered[n] = true;
        staged.kernels.push_back(make_group(primitives, set));
      }
      for (size_t n = 0; n < covered.size(); ++n) {
        if (!covered[n]) staged.kernels.push_back(make_group(primitives, {n}));
      }
      std::sort(staged.kernels.begin(), staged.kernels.end(),
                [](const KernelGroup& a, const KernelGroup& b) { return a.nodes.back() < b.nodes.back(); });
      expect_program_matches(pool, std::move(staged), feeds);
    }
    ++checked;
  }
  EXPECT_EQ(checked, 80);
}

// The pool reading its source in a native layout, writing the layout it
// offers or (for a row-major reader) converting back.
// Blocked layouts only where the channels fill whole blocks (else no copy
// converts them).
void expect_native_pool(memory::format_tag tag, bool native_output) {
  const Shape shape = {1, tag == memory::format_tag::nhwc ? 20 : 32, 13, 11};
  const Graph pool = max_pool(
      shape, attrs({{"kernel_shape", std::vector<int64_t>{5, 3}}, {"pads", std::vector<int64_t>{2, 1, 2, 1}}}));
  const Graph primitives = fission::fission(pool);
  std::unique_ptr<Kernel> kernel = cpu::make_pool_kernel(primitives, make_group(primitives, all_nodes(primitives)));
  ASSERT_TRUE(kernel);
  const memory::dims dims(shape.begin(), shape.end());
  const memory::desc plain = cpu::onednn::plain_f32(dims), native(dims, memory::data_type::f32, tag);
  ASSERT_TRUE(kernel->can_read_input_as(0, cpu::onednn::native_layout(native)));
  kernel->read_input_as(0, cpu::onednn::native_layout(native));
  memory::desc out_md = plain;
  const std::optional<NativeLayout> offered = kernel->native_output_layout(0);
  ASSERT_TRUE(offered);
  if (native_output) {
    kernel->use_native_output(0);
    out_md = cpu::onednn::layout_desc(*offered);
  }
  const Tensor x = random_tensor(DType::Float32, shape, 5, -1, 1);
  const std::vector<float> input(x.values<float>().begin(), x.values<float>().end());
  const std::vector<float> given = onednn_convert(input, plain, native);
  std::vector<float> out(out_md.get_size() / sizeof(float), 0.f);
  kernel->run({{given.data()}, {out.data()}});
  if (native_output) out = onednn_convert(out, out_md, plain);
  const Tensor want = reference::run_graph(pool, {{"in0", x}})[0];
  ASSERT_EQ(out.size(), size_t(want.numel()));
  for (size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i], want.values<float>()[i]) << i;
}

TEST(PoolKernel, ReadsAndWritesNativeLayouts) {
  for (memory::format_tag tag : {memory::format_tag::nhwc, memory::format_tag::nChw8c, memory::format_tag::nChw16c}) {
    SCOPED_TRACE(int(tag));
    expect_native_pool(tag, true);
    expect_native_pool(tag, false);
  }
}

TEST(PoolKernel, ChainsThatAreNotPoolsAreRefused) {
  GraphBuilder b;
  const ValueId x = b.input("x", {1, 4, 9, 9});
  const ValueId y = b.input("y", {1, 4, 9, 9});
  const auto shifted = [&](ValueId v, int64_t start) {
    return b.op("Slice", {v, b.g.add_constant("s" + std::to_string(b.seed++), Tensor::vector_i64({start})),
                          b.g.add_constant("e" + std::to_string(b.seed++), Tensor::vector_i64({start + 7})),
                          b.g.add_constant("a" + std::to_string(b.seed++), Tensor::vector_i64({3}))});
  };
  // Taps of two different tensors.
  const ValueId two = b.op("Max", {shifted(x, 0), shifted(y, 1)});
  const Graph two_sources = b.finish(two);
  EXPECT_TRUE(cpu::find_pools(two_sources, producer_nodes(two_sources)).empty());
  // Offsets 0, 1, 3: not a window.
  GraphBuilder c;
  const ValueId z = c.input("z", {1, 4, 9, 9});
  const auto tap = [&](int64_t start) {
    return c.op("Slice", {z, c.g.add_constant("s" + std::to_string(c.seed++), Tensor::vector_i64({start})),
                          c.g.add_constant("e" + std::to_string(c.seed++), Tensor::vector_i64({start + 6})),
                          c.g.add_constant("a" + std::to_string(c.seed++), Tensor::vector_i64({3}))});
  };
  const ValueId gap = c.op("Max", {c.op("Max", {tap(0), tap(1)}), tap(3)});
  Graph gapped = c.finish(gap);
  EXPECT_TRUE(cpu::find_pools(gapped, producer_nodes(gapped)).empty());
  // A window padded with zeros (a sum's padding, not a max's).
  const Graph pool = max_pool(
      {1, 3, 8, 8}, attrs({{"kernel_shape", std::vector<int64_t>{3, 3}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}}));
  Graph zero_padded = fission::fission(pool);
  for (size_t i = 0; i < zero_padded.nodes().size(); ++i) {
    Node& node = zero_padded.nodes()[i];
    if (node.op != "Pad") continue;
    node.inputs[2] = zero_padded.add_constant("zero", Tensor::from_vector(DType::Float32, {}, std::vector<float>{0.f}));
  }
  for (const std::vector<size_t>& set : cpu::find_pools(zero_padded, producer_nodes(zero_padded))) {
    for (size_t n : set) EXPECT_NE(zero_padded.nodes()[n].op, "Pad");
  }
  // The first per-axis stage of a padded window (the Pad and the fold along
  // the last axis) keeps the other axes' padding rows, windows of padding
  // alone: -inf in the graph, not what oneDNN's max writes there.
  {
    const Graph padded = fission::fission(pool);
    for (const std::vector<size_t>& set : cpu::find_pools(padded, producer_nodes(padded))) {
      const bool has_pad = std::any_of(set.begin(), set.end(), [&](size_t n) { return padded.nodes()[n].op == "Pad"; });
      EXPECT_TRUE(!has_pad || set == all_nodes(padded));
    }
  }
  // An average counting the padding but not ceil_mode's extension: no
  // oneDNN average divides so at the last window.
  const Graph ceil_average = average_pool({1, 2, 6, 6}, attrs({{"kernel_shape", std::vector<int64_t>{3, 3}},
                                                               {"strides", std::vector<int64_t>{2, 2}},
                                                               {"pads", std::vector<int64_t>{1, 1, 1, 1}},
                                                               {"ceil_mode", int64_t(1)},
                                                               {"count_include_pad", int64_t(1)}}));
  const Graph ceil_primitives = fission::fission(ceil_average);
  EXPECT_TRUE(cpu::find_pools(ceil_primitives, producer_nodes(ceil_primitives)).empty());
  // An intermediate read elsewhere: the whole window is no longer one kernel's.
  Graph shared = fission::fission(pool);
  for (const Node& node : shared.nodes()) {
    if (node.op == "Max") {
      shared.outputs().push_back(node.outputs[0]);
      break;
    }
  }
  for (const std::vector<size_t>& set : cpu::find_pools(shared, producer_nodes(shared))) {
    EXPECT_NE(set, all_nodes(shared));
  }
}

}  // namespace
}  // namespace orchid::runtime
