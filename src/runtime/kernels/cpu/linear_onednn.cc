// The registry's entry points for linear kernels: Conv, ConvTranspose and
// MatMul groups in float32, with epilogues as bias and post-ops. What is
// supported is decided once, in onednn_linear_spec.cc, for both the plan
// (linear_group_supported) and the kernel (make_linear_kernel). oneDNN is
// the default implementation; the others (ConvTranspose as one matmul or as
// GEMM + col2im, direct convolutions, few-row matrix products) read the same
// spec.
#include "runtime/kernels/cpu/conv_transpose_gemm.h"
#include "runtime/kernels/cpu/deconv_matmul.h"
#include "runtime/kernels/cpu/direct_conv.h"
#include "runtime/kernels/cpu/direct_matmul.h"
#include "runtime/kernels/cpu/onednn_linear_kernel.h"
#include "runtime/kernels/cpu/registry.h"
#include "support/error.h"

namespace orchid::runtime::cpu {

std::unique_ptr<Kernel> make_linear_kernel(const Graph& graph, const KernelGroup& group) {
  std::optional<onednn::LinearSpec> spec = onednn::analyze_group(graph, group);
  if (!group.variant.empty()) {
    // Only a damaged plan names another one; a known one that cannot build is Orchid's bug.
    if (group.variant != kDirectVariant && group.variant != kChannelsLastVariant &&
        group.variant != onednn::kResidualSumVariant) {
      ORCHID_FAIL() << "kernel '" << group.name << "' names an unknown implementation '" << group.variant << "'";
    }
    std::unique_ptr<Kernel> kernel;
    if (spec && group.variant == onednn::kResidualSumVariant) {
      try {
        if (onednn::residual_sum_applies(*spec)) kernel = onednn::build_linear_kernel(graph, group, *spec, true);
      } catch (const dnnl::error& e) {
        ORCHID_FAIL() << "oneDNN cannot build the kernel group '" << group.name << "' with its residual as a sum: "
                      << e.what();
      }
    } else if (spec && group.variant == kChannelsLastVariant) {
      kernel = make_channels_last_kernel(graph, group, *spec);
    } else if (spec) {
      kernel = spec->anchor.kind == onednn::LinearKind::MatMul ? make_direct_matmul_kernel(graph, group, *spec)
                                                               : make_direct_conv_kernel(graph, group, *spec);
    }
    ORCHID_CHECK(kernel) << "the kernel group '" << group.name << "' has no '" << group.variant
                         << "' implementation";
    return kernel;
  }
  if (!spec) return nullptr;
  // ConvTranspose: one matmul where the taps do not overlap, else GEMM +
  // col2im where it beats oneDNN's deconvolution.
  if (spec->anchor.kind == onednn::LinearKind::ConvTranspose) {
    if (std::unique_ptr<Kernel> k = make_deconv_matmul_kernel(graph, group, *spec)) return k;
    if (conv_transpose_gemm_preferred(*spec)) {
      if (std::unique_ptr<Kernel> k = make_conv_transpose_gemm_kernel(graph, group, *spec)) return k;
    }
  }
  try {
    return onednn::build_linear_kernel(graph, group, *spec);
  } catch (const dnnl::error& e) {
    // A lone node still runs on the reference kernel; a group with epilogues
    // has no other kernel, so the plan and oneDNN disagree: say why.
    if (group.nodes.size() == 1) return nullptr;
    ORCHID_FAIL() << "oneDNN cannot build the kernel group '" << group.name << "': " << e.what();
  }
}

std::vector<std::string> linear_variants(const Graph& graph, const KernelGroup& group) {
  std::optional<onednn::LinearSpec> spec = onednn::analyze_group(graph, group);
  std::vector<std::string> variants;
  if (spec && (direct_conv_supported(graph, *spec) || direct_matmul_supported(graph, *spec))) {
    variants.push_back(kDirectVariant);
  }
  if (spec && channels_last_supported(graph, *spec)) variants.push_back(kChannelsLastVariant);
  if (spec && onednn::residual_sum_applies(*spec)) variants.push_back(onednn::kResidualSumVariant);
  return variants;
}

bool linear_keeps_native_layouts(const Graph& graph, const KernelGroup& group) {
  if (group.variant == kChannelsLastVariant || group.variant == onednn::kResidualSumVariant) return true;
  if (!group.variant.empty()) return false;
  std::optional<onednn::LinearSpec> spec = onednn::analyze_group(graph, group);
  if (!spec || spec->anchor.kind == onednn::LinearKind::MatMul) return false;
  if (spec->anchor.kind == onednn::LinearKind::ConvTranspose && !deconv_matmul_applies(graph, *spec)) {
    return !(conv_transpose_gemm_preferred(*spec) && conv_transpose_gemm_applies(graph, *spec));
  }
  return true;
}

bool linear_group_supported(const Graph& graph, const KernelGroup& group) {
  return onednn::analyze_group(graph, group).has_value();
}

bool linear_can_absorb(const Graph& graph, const KernelGroup& group, const Node& next) {
  std::optional<onednn::LinearSpec> spec = onednn::analyze_group(graph, group);
  if (!spec || group.nodes.empty()) return false;
  const Node& last = graph.nodes().at(group.nodes.back());
  if (last.outputs.empty()) return false;
  bool bias_allowed = true;
  for (const onednn::Epilogue& e : spec->epilogues) bias_allowed = bias_allowed && e.kind == onednn::EpilogueKind::Bias;
  std::optional<onednn::Epilogue> epilogue =
      onednn::analyze_epilogue(graph, spec->anchor, last.outputs[0], next, bias_allowed);
  return epilogue && onednn::append_epilogue(spec->epilogues, std::move(*epilogue));
}

}  // namespace orchid::runtime::cpu
