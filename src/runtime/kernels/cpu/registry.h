// The CPU kernel library: factories tried in order for a kernel group. Each
// returns nullptr when it does not handle the group (another operator, a
// dtype or form it has no fast path for), so the reference kernel — the
// interpreter's implementation over the runtime's buffers — is the last
// resort and every primitive the interpreter supports runs.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/kernel.h"

namespace orchid::runtime::cpu {

// Attention (attention_kernel.h): a group of exactly the nodes find_attention
// returns.
std::unique_ptr<Kernel> make_attention_kernel(const Graph& graph, const KernelGroup& group);
// oneDNN: Conv, ConvTranspose and MatMul groups, with post-op epilogues;
// the group's variant when it names one (then it must build).
std::unique_ptr<Kernel> make_linear_kernel(const Graph& graph, const KernelGroup& group);
// ai.orchid G2BMM and GBMM (banded_kernel.h), float32, without epilogues.
std::unique_ptr<Kernel> make_banded_kernel(const Graph& graph, const KernelGroup& group);
// Elementwise unary/binary/ternary primitives with broadcasting.
std::unique_ptr<Kernel> make_elementwise_kernel(const Graph& graph, const KernelGroup& group);
// ReduceSum/Max/Min/Prod, ArgMax/ArgMin, CumSum.
std::unique_ptr<Kernel> make_reduce_kernel(const Graph& graph, const KernelGroup& group);
// Transpose, Reshape, Slice, Concat, Pad, Expand, Gather.
std::unique_ptr<Kernel> make_layout_kernel(const Graph& graph, const KernelGroup& group);
// A float32 Concat of convolution activations (3-D to 5-D) that also reads
// and writes oneDNN's native layouts (onednn_concat_kernel.cc): the layout
// library's copies, from each input's layout into the output's, or oneDNN's
// concat where channel blocks are cut; optionally with the Slices that
// compute its inputs.
std::unique_ptr<Kernel> make_concat_kernel(const Graph& graph, const KernelGroup& group);
// The Concat node `concat` and the Slices that compute its inputs (and
// nothing else reads), when there are any and make_concat_kernel computes
// them as one kernel of strided copies, row-major (YOLOX's Focus). `producers`:
// producer_nodes(graph).
std::optional<std::vector<size_t>> find_sliced_concat(const Graph& graph, const std::vector<size_t>& producers,
                                                      size_t concat);
// Whether make_concat_kernel takes the group (orchestration prices its
// tensors in native layouts, orchestration/layout_model.h).
bool concat_takes_native_layouts(const Graph& graph, const KernelGroup& group);
// A float32 Transpose of rank 3 to 5 between a channels-last image [N,
// spatial..., C] and the channels-first one [N, C, spatial...]
// (channels_last_transpose.cc): the layout library's copy while both sides
// are row-major, a relabeling of one buffer where the channels-first side
// lives in oneDNN's channels-last layout.
enum class ChannelsLastTranspose {
  ToChannelsFirst,  // [N, spatial..., C] -> [N, C, spatial...]: the output can be native
  ToChannelsLast,   // [N, C, spatial...] -> [N, spatial..., C]: the input can be native
};
std::optional<ChannelsLastTranspose> channels_last_transpose(const Graph& graph, const KernelGroup& group);
std::unique_ptr<Kernel> make_channels_last_transpose_kernel(const Graph& graph, const KernelGroup& group);
// Pooling (onednn_pool_kernel.cc): a group of Slices, at most one Pad, and
// Max nodes (a max pool) or Add nodes and a Div by window sizes (an
// average), whose output is the max or mean over a box of taps of one
// tensor, as oneDNN's pooling, in the layout its input arrives in.
std::unique_ptr<Kernel> make_pool_kernel(const Graph& graph, const KernelGroup& group);
// The node sets make_pool_kernel computes: per last Max of a window, the
// whole window and, where it was folded one axis at a time, its last stage;
// per average, its Div and what it divides.
std::vector<std::vector<size_t>> find_pools(const Graph& graph, const std::vector<size_t>& producers);
// Whether make_pool_kernel takes the group (a library kernel, no symbol).
bool is_pool_group(const Graph& graph, const KernelGroup& group);
// Any single node, through the reference interpreter's implementation.
std::unique_ptr<Kernel> make_reference_kernel(const Graph& graph, const KernelGroup& group);

// The implementations of a linear group other than the default one, by
// name (KernelGroup::variant): "direct" for depthwise and pointwise convs
// (direct_conv.h), "direct channels-last" for pointwise ones with pixels as
// the GEMM's rows.
std::vector<std::string> linear_variants(const Graph& graph, const KernelGroup& group);

// Whether the kernel of a linear group (make_linear_kernel's, of the group's
// variant) reads and writes oneDNN's native layouts (runtime/kernel.h): a
// oneDNN convolution or deconvolution, ConvTranspose as one channels-last
// matmul, the channels-last pointwise conv; not a matrix product, nor
// ConvTranspose as GEMM + col2im, nor the "direct" kernels (row-major).
bool linear_keeps_native_layouts(const Graph& graph, const KernelGroup& group);

// Whether make_linear_kernel can absorb `next` (a node consuming the current
// output of `group`, the group's only consumer of it) as a post-op of the
// group's linear anchor: per-channel bias Add, elementwise activations,
// binary Add/Mul with a tensor of the output's shape...
bool linear_can_absorb(const Graph& graph, const KernelGroup& group, const Node& next);
// Whether make_linear_kernel computes the whole group, epilogues of more than
// one node included (SiLU's Sigmoid + Mul pair is one swish post-op). The plan
// grows Conv/MatMul + epilogue kernels with it.
bool linear_group_supported(const Graph& graph, const KernelGroup& group);

}  // namespace orchid::runtime::cpu
