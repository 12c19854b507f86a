// The Concat kernel in oneDNN's native layouts, with the layouts forced
// (the layout a conv picks depends on the CPU): inputs in nChw8c, channels
// that fill whole blocks (the physical copies) and that do not (oneDNN's
// concat), against the row-major concatenation; and the copies between
// oneDNN layouts it relies on, against oneDNN's reorders.
#include <gtest/gtest.h>

#include <oneapi/dnnl/dnnl.hpp>

#include <numeric>

#include "ir/graph_utils.h"
#include "runtime/kernels/cpu/onednn_common.h"
#include "runtime/kernels/cpu/registry.h"
#include "onednn_test_util.h"
#include "runtime_test_util.h"

namespace orchid::runtime {
namespace {

using namespace testing;  // NOLINT
using dnnl::memory;
using tag = memory::format_tag;

memory::desc blocked8(const Shape& shape) {
  return memory::desc(memory::dims(shape.begin(), shape.end()), memory::data_type::f32, tag::nChw8c);
}

// A graph of one Concat on channels of [1, c, 5, 7] inputs, one per entry
// of `channels`.
Graph channel_concat(const std::vector<int64_t>& channels) {
  Graph g;
  std::vector<ValueId> parts;
  for (size_t i = 0; i < channels.size(); ++i) {
    parts.push_back(g.add_value("x" + std::to_string(i), {DType::Float32, {1, channels[i], 5, 7}}));
    g.inputs().push_back(parts.back());
  }
  g.outputs().push_back(add_op(g, "Concat", parts, attrs({{"axis", int64_t(1)}}))[0]);
  return g;
}

// Concatenates inputs of `channels` (each [1, c, 5, 7]) given in nChw8c and
// writes the output natively when the kernel offers it; expects the
// row-major result.
void expect_native_concat(const std::vector<int64_t>& channels, const std::string& implementation) {
  Graph g = channel_concat(channels);
  const std::vector<ValueId> parts = g.inputs();
  const int64_t total = std::accumulate(channels.begin(), channels.end(), int64_t(0));
  const KernelGroup group = make_group(g, {0});
  std::unique_ptr<Kernel> kernel = cpu::make_concat_kernel(g, group);
  ASSERT_TRUE(kernel);
  std::vector<std::vector<float>> plain, native;
  for (size_t i = 0; i < parts.size(); ++i) {
    const Shape& shape = g.type(parts[i]).shape;
    const Tensor values = random_tensor(DType::Float32, shape, uint32_t(i + 1), -1, 1);
    plain.emplace_back(values.values<float>().begin(), values.values<float>().end());
    native.push_back(onednn_convert(plain.back(), cpu::onednn::plain_f32({1, shape[1], 5, 7}), blocked8(shape)));
    kernel->read_input_as(i, cpu::onednn::native_layout(blocked8(shape)));
  }
  // The output in the layout the kernel offers, if any (else row-major).
  const memory::desc row_major = cpu::onednn::plain_f32({1, total, 5, 7});
  memory::desc out_md = row_major;
  if (std::optional<NativeLayout> layout = kernel->native_output_layout(0)) {
    kernel->use_native_output(0);
    out_md = cpu::onednn::layout_desc(*layout);
  }
  EXPECT_EQ(kernel->implementation().rfind(implementation, 0), 0u) << kernel->implementation();
  std::vector<float> result(out_md.get_size() / sizeof(float), 0.f);
  KernelArgs args;
  for (const auto& n : native) args.inputs.push_back(n.data());
  args.outputs.push_back(result.data());
  kernel->run(args);
  std::vector<float> expected;
  for (const auto& p : plain) expected.insert(expected.end(), p.begin(), p.end());
  const std::vector<float> got = onednn_convert(result, out_md, row_major);
  EXPECT_EQ(std::vector<float>(got.begin(), got.begin() + int64_t(expected.size())), expected);
}

TEST(NativeConcat, WholeBlocksAreCopiedPhysically) {
  expect_native_concat({8, 16, 8}, "layout Concat (native layouts: copies)");
}

TEST(NativeConcat, PartialBlocksGoThroughOneDnn) {
  expect_native_concat({3, 5, 8}, "layout Concat (native layouts: oneDNN");
}

// Concatenates [1, c, 5, 7] inputs given in `layouts` (row-major where a tag
// is `any`) into an output its reader wants in `out_tag`; expects the
// row-major result and the copies.
void expect_concat_written_as(const std::vector<int64_t>& channels, const std::vector<tag>& layouts, tag out_tag) {
  Graph g = channel_concat(channels);
  const std::vector<ValueId> parts = g.inputs();
  const int64_t total = std::accumulate(channels.begin(), channels.end(), int64_t(0));
  std::unique_ptr<Kernel> kernel = cpu::make_concat_kernel(g, make_group(g, {0}));
  ASSERT_TRUE(kernel);
  std::vector<std::vector<float>> plain, given;
  for (size_t i = 0; i < parts.size(); ++i) {
    const memory::dims dims = {1, channels[i], 5, 7};
    const Tensor values = random_tensor(DType::Float32, {1, channels[i], 5, 7}, uint32_t(i + 1), -1, 1);
    plain.emplace_back(values.values<float>().begin(), values.values<float>().end());
    if (layouts[i] == tag::any) {
      given.push_back(plain.back());
      continue;
    }
    const memory::desc md(dims, memory::data_type::f32, layouts[i]);
    given.push_back(onednn_convert(plain.back(), cpu::onednn::plain_f32(dims), md));
    kernel->read_input_as(i, cpu::onednn::native_layout(md));
  }
  const memory::desc out_md({1, total, 5, 7}, memory::data_type::f32, out_tag);
  const NativeLayout out_layout = cpu::onednn::native_layout(out_md);
  ASSERT_TRUE(kernel->can_write_output_as(0, out_layout));
  kernel->write_output_as(0, out_layout);
  EXPECT_EQ(kernel->implementation(), "layout Concat (native layouts: copies)");
  std::vector<float> result(out_md.get_size() / sizeof(float), 0.f);
  KernelArgs args;
  for (const auto& v : given) args.inputs.push_back(v.data());
  args.outputs.push_back(result.data());
  kernel->run(args);
  std::vector<float> expected;
  for (const auto& p : plain) expected.insert(expected.end(), p.begin(), p.end());
  EXPECT_EQ(onednn_convert(result, out_md, cpu::onednn::plain_f32({1, total, 5, 7})), expected);
}

TEST(NativeConcat, RowMajorInputsAreWrittenInTheLayoutTheReaderWants) {
  expect_concat_written_as({3, 3, 3, 3}, {tag::any, tag::any, tag::any, tag::any}, tag::nhwc);
}

TEST(NativeConcat, MixedLayoutsAreCopiedEachFromItsOwn) {
  expect_concat_written_as({16, 8, 24}, {tag::any, tag::nhwc, tag::nChw8c}, tag::nhwc);
  expect_concat_written_as({16, 8, 24}, {tag::nhwc, tag::any, tag::nChw8c}, tag::nChw8c);
}

TEST(NativeConcat, AnOutputThatCutsBlocksIsNotOffered) {
  Graph g;
  ValueId a = g.add_value("a", {DType::Float32, {1, 3, 2, 2}});
  g.inputs().push_back(a);
  g.outputs().push_back(add_op(g, "Concat", {a, a}, attrs({{"axis", int64_t(1)}}))[0]);
  std::unique_ptr<Kernel> kernel = cpu::make_concat_kernel(g, make_group(g, {0}));
  ASSERT_TRUE(kernel);
  const memory::desc wrong_shape({1, 3, 2, 2}, memory::data_type::f32, tag::nhwc);
  EXPECT_FALSE(kernel->can_write_output_as(0, cpu::onednn::native_layout(wrong_shape)));
}

// An int64 constant of `values` (a Slice's starts, ends, axes or steps).
ValueId i64(Graph& g, const std::vector<int64_t>& values) {
  static int counter = 0;
  return g.add_constant("p" + std::to_string(counter++),
                        Tensor::from_vector(DType::Int64, {int64_t(values.size())}, values));
}

ValueId strided_slice(Graph& g, ValueId x, int64_t axis, int64_t start, int64_t step) {
  return add_op(g, "Slice", {x, i64(g, {start}), i64(g, {int64_t(1) << 40}), i64(g, {axis}), i64(g, {step})})[0];
}

// YOLOX's Focus: x[..., ::2, ::2], x[..., 1::2, ::2], x[..., ::2, 1::2],
// x[..., 1::2, 1::2] concatenated on channels, of a [1, 3, h, w] input.
Graph focus(int64_t h, int64_t w) {
  Graph g;
  ValueId x = g.add_value("x", {DType::Float32, {1, 3, h, w}});
  g.inputs().push_back(x);
  const ValueId rows[2] = {strided_slice(g, x, 2, 0, 2), strided_slice(g, x, 2, 1, 2)};
  std::vector<ValueId> parts;
  for (int64_t column : {0, 1}) {
    for (ValueId r : rows) parts.push_back(strided_slice(g, r, 3, column, 2));
  }
  g.outputs().push_back(add_op(g, "Concat", parts, attrs({{"axis", int64_t(1)}}))[0]);
  return g;
}

TEST(SlicedConcat, FocusIsOneKernelOfCopies) {
  for (const auto& [h, w] : {std::pair<int64_t, int64_t>{8, 40}, {6, 34}, {2, 18}, {2, 2}}) {
    const Graph g = focus(h, w);
    const std::optional<std::vector<size_t>> nodes = cpu::find_sliced_concat(g, producer_nodes(g), 6);
    ASSERT_TRUE(nodes) << h << "x" << w;
    EXPECT_EQ(nodes->size(), 7u);
    const std::vector<std::string> ran = expect_runtime_matches(g, uniform_feeds(g, 5), {*nodes});
    EXPECT_EQ(ran, std::vector<std::string>{"layout Slice+Concat (copies)"});
  }
}

TEST(SlicedConcat, KeepsItsOutputRowMajor) {
  // Strided reads written channels-last are slower than the conv's reorder.
  const Graph g = focus(8, 40);
  const std::optional<std::vector<size_t>> nodes = cpu::find_sliced_concat(g, producer_nodes(g), 6);
  ASSERT_TRUE(nodes);
  std::unique_ptr<Kernel> kernel = cpu::make_concat_kernel(g, make_group(g, *nodes));
  ASSERT_TRUE(kernel);
  const memory::desc nhwc({1, 12, 4, 20}, memory::data_type::f32, tag::nhwc);
  EXPECT_FALSE(kernel->can_write_output_as(0, cpu::onednn::native_layout(nhwc)));
  EXPECT_FALSE(kernel->can_read_input_as(0, cpu::onednn::native_layout(nhwc)));
}

TEST(SlicedConcat, NoneWhenASliceIsReadElsewhere) {
  Graph g = focus(8, 40);
  g.outputs().push_back(g.nodes()[0].outputs[0]);  // x[..., ::2, :] is also an output
  EXPECT_FALSE(cpu::find_sliced_concat(g, producer_nodes(g), 6));
}

// layout_copy against oneDNN's reorder: `from` into `to`, whole tensors.
void expect_reorder(const memory::dims& dims, tag from, tag to) {
  const memory::desc a(dims, memory::data_type::f32, from), b(dims, memory::data_type::f32, to);
  const std::optional<cpu::StridedCopy> copy = cpu::onednn::layout_copy(a, b);
  ASSERT_TRUE(copy) << int(from) << " -> " << int(to);
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  const Tensor values = random_tensor(DType::Float32, Shape(dims.begin(), dims.end()), 7, -1, 1);
  const std::vector<float> plain(values.values<float>().begin(), values.values<float>().end());
  const std::vector<float> source = onednn_convert(plain, cpu::onednn::plain_f32(dims), a);
  std::vector<float> out(b.get_size() / sizeof(float), 0.f);
  cpu::run_strided_copy(*copy, sizeof(float), source.data(), out.data());
  EXPECT_EQ(out, onednn_convert(plain, cpu::onednn::plain_f32(dims), b)) << int(from) << " -> " << int(to);
}

TEST(LayoutCopy, ReordersBetweenRowMajorChannelsLastAndBlocked) {
  const std::vector<tag> tags = {tag::nchw, tag::nhwc, tag::nChw8c, tag::nChw16c};
  for (tag from : tags) {
    for (tag to : tags) expect_reorder({2, 32, 5, 3}, from, to);
  }
  expect_reorder({1, 48, 7, 9}, tag::nChw16c, tag::nhwc);
}

TEST(LayoutCopy, ChannelsLastIntoRowMajorIsATranspose) {
  const memory::dims dims = {1, 64, 26, 26};
  const std::optional<cpu::StridedCopy> copy =
      cpu::onednn::layout_copy(cpu::onednn::plain_f32(dims), memory::desc(dims, memory::data_type::f32, tag::nhwc));
  ASSERT_TRUE(copy);
  ASSERT_EQ(copy->dims.size(), 2u);
  EXPECT_EQ(copy->dims[0].size, 26 * 26);
  EXPECT_EQ(copy->dims[0].in_stride, 1);
  EXPECT_EQ(copy->dims[0].out_stride, 64);
  EXPECT_EQ(copy->dims[1].size, 64);
  EXPECT_EQ(copy->dims[1].in_stride, 26 * 26);
  EXPECT_EQ(copy->dims[1].out_stride, 1);
}

TEST(LayoutCopy, NoneWhereABlockIsCutOrPadded) {
  const memory::desc part({1, 8, 4, 4}, memory::data_type::f32, tag::nchw);
  const memory::desc whole({1, 32, 4, 4}, memory::data_type::f32, tag::nChw16c);
  EXPECT_FALSE(cpu::onednn::layout_copy(part, whole, {0, 16, 0, 0}));  // ends mid-block
  EXPECT_FALSE(cpu::onednn::layout_copy(part, whole, {0, 8, 0, 0}));   // starts mid-block
  EXPECT_TRUE(cpu::onednn::layout_copy(memory::desc({1, 16, 4, 4}, memory::data_type::f32, tag::nchw), whole,
                                       {0, 16, 0, 0}));
  const memory::desc padded({1, 3, 4, 4}, memory::data_type::f32, tag::nChw8c);
  EXPECT_FALSE(cpu::onednn::layout_copy(cpu::onednn::plain_f32({1, 3, 4, 4}), padded));
  const memory::desc eight({1, 24, 4, 4}, memory::data_type::f32, tag::nChw8c);
  EXPECT_TRUE(cpu::onednn::layout_copy(memory::desc({1, 8, 4, 4}, memory::data_type::f32, tag::nChw8c), eight,
                                       {0, 16, 0, 0}));
}

}  // namespace
}  // namespace orchid::runtime
