// The Concat kernel in oneDNN's native layouts, with the layouts forced
// (the layout a conv picks depends on the CPU): inputs in nChw8c, channels
// that fill whole blocks (the physical copies) and that do not (oneDNN's
// concat), against the row-major concatenation; and the physical views of
// oneDNN layouts it relies on.
#include <gtest/gtest.h>

#include <oneapi/dnnl/dnnl.hpp>

#include "runtime/kernels/cpu/onednn_common.h"
#include "runtime/kernels/cpu/registry.h"
#include "runtime_test_util.h"

namespace orchid::runtime {
namespace {

using namespace testing;  // NOLINT
using dnnl::memory;
using tag = memory::format_tag;

memory::desc blocked8(const Shape& shape) {
  return memory::desc(memory::dims(shape.begin(), shape.end()), memory::data_type::f32, tag::nChw8c);
}

// `data` (row-major) converted into `md`, and back.
std::vector<float> convert(const std::vector<float>& data, const memory::desc& from, const memory::desc& to) {
  dnnl::engine& engine = cpu::onednn::cpu_engine();
  std::vector<float> source(from.get_size() / sizeof(float), 0.f);
  std::copy(data.begin(), data.end(), source.begin());
  std::vector<float> out(to.get_size() / sizeof(float), 0.f);
  memory a(from, engine, source.data()), b(to, engine, out.data());
  dnnl::stream stream(engine);
  dnnl::reorder(a, b).execute(stream, a, b);
  stream.wait();
  return out;
}

// Concatenates inputs of `channels` (each [1, c, 5, 7]) given in nChw8c and
// writes the output natively when the kernel offers it; expects the
// row-major result.
void expect_native_concat(const std::vector<int64_t>& channels, const std::string& implementation) {
  Graph g;
  std::vector<ValueId> parts;
  int64_t total = 0;
  for (size_t i = 0; i < channels.size(); ++i) {
    parts.push_back(g.add_value("x" + std::to_string(i), {DType::Float32, {1, channels[i], 5, 7}}));
    g.inputs().push_back(parts.back());
    total += channels[i];
  }
  ValueId out = add_op(g, "Concat", parts, attrs({{"axis", int64_t(1)}}))[0];
  g.outputs().push_back(out);
  const KernelGroup group = make_group(g, {0});
  std::unique_ptr<Kernel> kernel = cpu::make_concat_kernel(g, group);
  ASSERT_TRUE(kernel);
  std::vector<std::vector<float>> plain, native;
  for (size_t i = 0; i < parts.size(); ++i) {
    const Shape& shape = g.type(parts[i]).shape;
    const Tensor values = random_tensor(DType::Float32, shape, uint32_t(i + 1), -1, 1);
    plain.emplace_back(values.values<float>().begin(), values.values<float>().end());
    native.push_back(convert(plain.back(), cpu::onednn::plain_f32({1, shape[1], 5, 7}), blocked8(shape)));
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
  const std::vector<float> got = convert(result, out_md, row_major);
  EXPECT_EQ(std::vector<float>(got.begin(), got.begin() + int64_t(expected.size())), expected);
}

TEST(NativeConcat, WholeBlocksAreCopiedPhysically) {
  expect_native_concat({8, 16, 8}, "layout Concat (native layouts: copies)");
}

TEST(NativeConcat, PartialBlocksGoThroughOneDnn) {
  expect_native_concat({3, 5, 8}, "layout Concat (native layouts: oneDNN");
}

TEST(PhysicalView, BlockedChannels) {
  const std::optional<cpu::onednn::PhysicalView> view = cpu::onednn::physical_view(blocked8({1, 32, 52, 52}));
  ASSERT_TRUE(view);
  EXPECT_EQ(view->extents, (std::vector<int64_t>{1, 4, 52, 52, 8}));
  EXPECT_EQ(view->logical, (std::vector<int>{0, 1, 2, 3, 1}));
  EXPECT_EQ(view->outer_of(1), 1u);
}

TEST(PhysicalView, ChannelsLast) {
  const memory::desc md({2, 32, 6, 5}, memory::data_type::f32, tag::nhwc);
  const std::optional<cpu::onednn::PhysicalView> view = cpu::onednn::physical_view(md);
  ASSERT_TRUE(view);
  EXPECT_EQ(view->extents, (std::vector<int64_t>{2, 6, 5, 32}));
  EXPECT_EQ(view->logical, (std::vector<int>{0, 2, 3, 1}));
  EXPECT_EQ(view->outer_of(1), 3u);
}

TEST(PhysicalView, PaddedBlocksHaveNone) {
  EXPECT_FALSE(cpu::onednn::physical_view(blocked8({1, 3, 4, 4})));
}

}  // namespace
}  // namespace orchid::runtime
