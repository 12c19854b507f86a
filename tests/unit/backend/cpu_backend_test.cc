// The CPU backend through the target interface (backend/backend.h), as
// orchestration and the executor use it: its candidate rules, a generated
// module built, loaded and run, library kernels, memory, the machine's
// identity per thread count, and a generated group without its module.
#include "backend/backend.h"

#include <unistd.h>

#include <filesystem>

#include "codegen/cpu/compiler.h"
#include "orchestration/candidates.h"
#include "runtime/executable.h"
#include "../runtime/runtime_test_util.h"
#include "../test_temp_dir.h"

namespace orchid::backend {
namespace {

namespace fs = std::filesystem;
using runtime::testing::GraphBuilder;

TEST(CpuBackend, CandidateRulesAreComplete) {
  const Backend& cpu = cpu_backend();
  EXPECT_EQ(cpu.name(), "cpu");
  const orchestration::CandidateRules rules = cpu.candidate_rules();
  EXPECT_TRUE(rules.fusion.can_fuse && rules.fusion.is_linear && rules.can_generate && rules.linear_supported &&
              rules.linear_variants && rules.library_sets && rules.takes_native_layouts &&
              rules.linear_keeps_native_layouts);
}

// Relu -> Add -> Tanh as one generated kernel (built into a module, loaded,
// made by the backend) and Tanh's library kernel, run by an Executable on
// the backend, against the interpreter.
TEST(CpuBackend, BuildsLoadsAndRunsAModule) {
  if (!codegen::cpu::compiler_available()) GTEST_SKIP() << "no C++ compiler";
  GraphBuilder b;
  const ValueId x = b.input("x", {3, 37});
  const ValueId y = b.op("Add", {b.op("Relu", {x}), b.constant({37})});
  const Graph g = b.finish(b.op("Tanh", {y}));
  runtime::Program program;
  program.graph = g;
  program.kernels = {runtime::make_group(g, {0, 1}), runtime::make_group(g, {2})};
  program.kernels[0].symbol = "orchid_kernel_0";
  const orchid::testing::TempDir scratch("orchid-backend-test");
  const fs::path& dir = scratch.path();
  const Backend& cpu = cpu_backend();
  const BuiltModule built = cpu.build_module(g, {program.kernels[0]}, dir.string());
  EXPECT_FALSE(built.source.empty());
  EXPECT_TRUE(fs::is_regular_file(built.path));
  const std::shared_ptr<const KernelModule> module = cpu.load_module(built.path, built.sha256);
  EXPECT_EQ(cpu.make_kernel(g, program.kernels[0], module)->implementation(), "generated");
  EXPECT_EQ(cpu.make_kernel(g, program.kernels[1], nullptr)->implementation(), "elementwise");
  EXPECT_THROW(cpu.make_kernel(g, program.kernels[0], nullptr), InternalError);
  program.library_path = built.path;
  program.library_sha256 = built.sha256;
  const std::map<std::string, Tensor> feeds = runtime::testing::uniform_feeds(g, 3, -2, 2);
  runtime::Executable executable(std::move(program), cpu);
  const reference::Comparison c =
      reference::compare_tensors(executable.run(feeds)[0], reference::run_graph(g, feeds)[0], 1e-5, 1e-5);
  EXPECT_TRUE(c.ok) << c.mismatch;
  std::error_code ec;
  fs::remove_all(dir, ec);
}

TEST(CpuBackend, MemoryAndMachine) {
  const Backend& cpu = cpu_backend();
  for (size_t bytes : {size_t(1), size_t(100), size_t(1) << 20}) {
    std::shared_ptr<std::byte[]> p = cpu.allocate(bytes);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p.get()) % 64, 0u);
  }
  cpu.synchronize();
  EXPECT_NE(cpu.fingerprint(1), cpu.fingerprint(2));
  EXPECT_EQ(cpu.fingerprint(1), cpu.fingerprint(1));
}

}  // namespace
}  // namespace orchid::backend
