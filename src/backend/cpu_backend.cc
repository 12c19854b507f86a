#include <new>

#include "backend/backend.h"
#include "codegen/cpu/compiler.h"
#include "codegen/cpu/emitter.h"
#include "fission/primitive.h"
#include "ir/graph_utils.h"
#include "orchestration/candidates.h"
#include "reference/ops/banded.h"
#include "runtime/kernels/cpu/attention_kernel.h"
#include "runtime/kernels/cpu/generated_kernel.h"
#include "runtime/kernels/cpu/pointwise_layout.h"
#include "runtime/kernels/cpu/registry.h"
#include "support/error.h"
#include "support/parallel.h"

namespace orchid::backend {

namespace {

class CpuModule : public KernelModule {
 public:
  CpuModule(const std::string& path, const std::string& sha256)
      : library(std::make_shared<const runtime::cpu::SharedLibrary>(path, sha256)) {}
  std::shared_ptr<const runtime::cpu::SharedLibrary> library;
};

orchestration::FusionRules fusion_rules() {
  return {[](const Graph& graph, const Node& node) { return codegen::cpu::can_fuse(graph, node); },
          // Linear candidates are oneDNN kernels (post-op epilogues, native
          // layouts in the BLP). The banded matmuls are linear primitives too,
          // but their kernel (runtime/kernels/cpu/banded_kernel.h) takes no
          // epilogue and reads and writes row-major: with can_fuse false as
          // well, each runs alone as a library kernel.
          [](const Graph& graph, const Node& node) {
            return fission::primitive_kind(node, graph) == fission::PrimitiveKind::Linear &&
                   !reference::is_banded_op(node);
          }};
}

// The node sets one library kernel computes: attentions with enough scores
// to pay, Concats with the Slices computing their inputs, max pools.
std::vector<std::vector<size_t>> library_sets(const Graph& graph) {
  std::vector<std::vector<size_t>> sets;
  const std::vector<size_t> producers = producer_nodes(graph);
  for (size_t node = 0; node < graph.nodes().size(); ++node) {
    std::optional<std::vector<size_t>> nodes;
    if (graph.nodes()[node].op == "MatMul") {
      nodes = runtime::cpu::find_attention(graph, node);
      if (nodes && runtime::cpu::attention_scores(graph, node) < runtime::cpu::kMinAttentionScores) nodes.reset();
    }
    if (graph.nodes()[node].op == "Concat") nodes = runtime::cpu::find_sliced_concat(graph, producers, node);
    if (nodes) sets.push_back(std::move(*nodes));
  }
  for (std::vector<size_t>& pool : runtime::cpu::find_pools(graph, producers)) sets.push_back(std::move(pool));
  return sets;
}

class CpuBackend : public Backend {
 public:
  std::string name() const override { return "cpu"; }

  orchestration::CandidateRules candidate_rules() const override {
    // Without a working compiler nothing is generated (compiler_available warns).
    const bool compiler = codegen::cpu::compiler_available();
    return {fusion_rules(),
            [compiler](const Graph& graph, const runtime::KernelGroup& group) {
              return compiler && codegen::cpu::can_generate(graph, group);
            },
            [](const Graph& graph, const runtime::KernelGroup& group) {
              return runtime::cpu::linear_group_supported(graph, group);
            },
            [](const Graph& graph, const runtime::KernelGroup& group) {
              return runtime::cpu::linear_variants(graph, group);
            },
            library_sets,
            [](const Graph& graph, const runtime::KernelGroup& group) {
              // A generated kernel (a symbol) adapts only when it is pointwise (make_kernel).
              return runtime::cpu::is_pointwise_group(graph, group) ||
                     (group.symbol.empty() && (runtime::cpu::concat_takes_native_layouts(graph, group) ||
                                               runtime::cpu::is_pool_group(graph, group)));
            },
            [](const Graph& graph, const runtime::KernelGroup& group) {
              return runtime::cpu::linear_keeps_native_layouts(graph, group);
            },
            [](const Graph& graph, const runtime::KernelGroup& group) {
              using orchestration::Relabeling;
              if (!group.symbol.empty()) return Relabeling::None;  // a generated kernel copies
              const auto direction = runtime::cpu::channels_last_transpose(graph, group);
              if (!direction) return Relabeling::None;
              return *direction == runtime::cpu::ChannelsLastTranspose::ToChannelsFirst ? Relabeling::OutputNative
                                                                                        : Relabeling::InputNative;
            }};
  }

  BuiltModule build_module(const Graph& graph, const std::vector<runtime::KernelGroup>& groups,
                           const std::string& cache_dir) const override {
    BuiltModule module;
    module.source = codegen::cpu::emit_library(graph, groups);
    const codegen::cpu::BuildResult built = codegen::cpu::build_library(module.source, cache_dir);
    module.path = built.library_path;
    module.sha256 = built.sha256;
    module.cached = built.cached;
    return module;
  }

  std::shared_ptr<const KernelModule> load_module(const std::string& path, const std::string& sha256) const override {
    return std::make_shared<const CpuModule>(path, sha256);
  }

  std::unique_ptr<runtime::Kernel> make_kernel(const Graph& graph, const runtime::KernelGroup& group,
                                               const std::shared_ptr<const KernelModule>& module) const override {
    if (group.symbol.empty()) return runtime::cpu::in_any_layout(runtime::make_cpu_kernel(graph, group), graph, group);
    const auto* cpu = dynamic_cast<const CpuModule*>(module.get());
    ORCHID_CHECK(cpu != nullptr) << "generated kernel '" << group.name << "' without a CPU kernel module";
    return runtime::cpu::in_any_layout(runtime::cpu::make_generated_kernel(cpu->library, graph, group), graph, group);
  }

  std::shared_ptr<std::byte[]> allocate(size_t bytes) const override {
    constexpr std::align_val_t kAlign{64};
    return std::shared_ptr<std::byte[]>(static_cast<std::byte*>(::operator new[](bytes, kAlign)),
                                        [](std::byte* p) { ::operator delete[](p, kAlign); });
  }

  void synchronize() const override {}  // kernels have finished when run returns
  void set_threads(int threads) const override { set_num_threads(threads); }
  std::string fingerprint(int threads) const override { return cost::machine_fingerprint(threads); }
  cost::MachinePeaks measure_peaks(int threads) const override { return cost::measure_peaks(threads); }
};

}  // namespace

const Backend& cpu_backend() {
  static const CpuBackend backend;
  return backend;
}

}  // namespace orchid::backend
