// Builds generated C++ with the compiler that built Orchid, cached by content.
#include "codegen/cpu/compiler.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "support/cache_dir.h"
#include "support/error.h"
#include "support/sha256.h"

namespace orchid::codegen::cpu {

namespace fs = std::filesystem;

#ifndef ORCHID_KERNEL_CXX
#define ORCHID_KERNEL_CXX "c++"
#endif
#ifndef ORCHID_KERNEL_FLAGS
#define ORCHID_KERNEL_FLAGS ""
#endif

std::string kernel_compiler() {
  const char* chosen = std::getenv("ORCHID_KERNEL_CXX");
  return chosen && *chosen ? chosen : ORCHID_KERNEL_CXX;
}

namespace {

std::string quoted(const std::string& s) { return "'" + s + "'"; }

}  // namespace

bool compiler_available() {
  static const bool available = [] {
    const std::string probe = quoted(kernel_compiler()) + " --version > /dev/null 2>&1";
    if (std::system(probe.c_str()) == 0) return true;
    std::cerr << "warning: the C++ compiler " << kernel_compiler() << " does not run, so Orchid generates no "
              << "fused kernels: every kernel comes from its library (install g++, or point $ORCHID_KERNEL_CXX "
              << "at a compiler)\n";
    return false;
  }();
  return available;
}

namespace {

// Orchid's own flags (e.g. -march=native) plus what a loadable, optimized,
// OpenMP kernel library needs; -w because generated code has unused locals.
// -fno-trapping-math lets GCC if-convert (and so vectorize) selects on floats
// such as fast_math's clamps and the Pad/Max selects, -fno-math-errno lets it
// vectorize sqrt: neither changes a result value (unlike -ffast-math), only
// FP exception flags and errno, which nothing reads.
// GCC does not take the __restrict of the buffer views declared inside an
// OpenMP region as a guarantee: it versions a loop with a run-time overlap
// test per pair of buffers, and gives up on vectorizing above 10 tests (a
// fused Resize+Add over four inputs has 13: 12.1 ms scalar). The tests cost
// a few compares per loop entry, so the limit is raised (Clang ignores it).
std::string compiler_flags() {
  return std::string(ORCHID_KERNEL_FLAGS) +
         " -std=c++20 -O3 -fno-trapping-math -fno-math-errno --param vect-max-version-for-alias-checks=64 -fPIC"
         " -shared -fopenmp -w";
}

// FNV-1a, 64 bits: a content key, not a security boundary.
std::string content_hash(const std::string& text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(h));
  return buffer;
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(text.data(), std::streamsize(text.size()));
  if (!file) ORCHID_FAIL() << path.string() << ": cannot write the file";
}

std::string first_lines(const fs::path& path, size_t count) {
  std::ifstream file(path);
  std::string line, text;
  for (size_t i = 0; i < count && std::getline(file, line); ++i) text += line + "\n";
  return text;
}

std::string read_text(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
}

// The recorded SHA-256 of a cached library when the file still has it, else
// empty: the entry is then removed, to be built again.
std::string verified_cached_hash(const fs::path& library, const fs::path& record) {
  std::error_code ec;
  if (!fs::is_regular_file(library, ec)) return "";
  const std::string recorded = fs::is_regular_file(record, ec) ? read_text(record) : "";
  if (!recorded.empty() && recorded == sha256_of_file(library.string())) return recorded;
  std::cerr << "warning: " << library.string() << " does not match its recorded SHA-256; building it again\n";
  fs::remove(library, ec);
  fs::remove(record, ec);
  return "";
}

// Runs `command` (stdout and stderr to `log`); whether it succeeded.
bool run_command(const std::string& command, const fs::path& log) {
  return std::system((command + " > " + quoted(log.string()) + " 2>&1").c_str()) == 0;
}

// Whether `gch` matches its recorded SHA-256 (checked at every use, like a
// library before dlopen: about 25 ms for the 50 MB header).
bool header_verified(const fs::path& gch) {
  std::error_code ec;
  const fs::path record = gch.string() + ".sha256";
  if (!fs::is_regular_file(gch, ec) || !fs::is_regular_file(record, ec)) return false;
  return read_text(record) == sha256_of_file(gch.string());
}

// The prelude as a precompiled header (see kPreludeEnd): the header's path,
// built when missing or not matching its record; nullopt when it cannot be
// built (the caller compiles the whole source instead).
std::optional<fs::path> prelude_header(const fs::path& dir, const std::string& compiler, const std::string& flags,
                                       const std::string& prelude) {
  const std::string name = "prelude-" + content_hash(compiler + "\n" + flags + "\n" + prelude);
  const fs::path final_dir = dir / name;
  if (header_verified(final_dir / "prelude.h.gch")) return final_dir / "prelude.h";
  std::error_code ec;
  if (fs::exists(final_dir, ec)) fs::remove_all(final_dir, ec);  // partial or not matching its record
  const fs::path build_dir = dir / (name + "." + std::to_string(::getpid()) + ".tmp");
  fs::remove_all(build_dir, ec);
  fs::create_directories(build_dir, ec);
  if (ec) return std::nullopt;
  write_text(build_dir / "prelude.h", prelude);
  const fs::path gch = build_dir / "prelude.h.gch";
  const std::string command = quoted(compiler) + " " + flags + " -x c++-header " +
                              quoted((build_dir / "prelude.h").string()) + " -o " + quoted(gch.string());
  if (!run_command(command, build_dir / "log") || !fs::is_regular_file(gch, ec)) {
    fs::remove_all(build_dir, ec);
    return std::nullopt;
  }
  write_text(gch.string() + ".sha256", sha256_of_file(gch.string()));
  fs::remove(build_dir / "log", ec);
  fs::rename(build_dir, final_dir, ec);  // another process may have won: then its header is used
  fs::remove_all(build_dir, ec);
  if (!header_verified(final_dir / "prelude.h.gch")) return std::nullopt;
  return final_dir / "prelude.h";
}

}  // namespace

BuildResult build_library(const std::string& source, const std::string& cache_dir) {
  const std::string flags = compiler_flags();
  const std::string compiler = kernel_compiler();
  const std::string hash = content_hash(compiler + "\n" + flags + "\n" + source);
  const fs::path dir = private_cache_dir((fs::path(cache_dir) / "kernels").string());
  const fs::path library = dir / (hash + ".so");
  const fs::path record = dir / (hash + ".so.sha256");
  BuildResult result;
  result.library_path = library.string();
  std::error_code ec;
  result.sha256 = verified_cached_hash(library, record);
  if (!result.sha256.empty()) {
    result.cached = true;
    return result;
  }
  // Per-process temporary names, renamed into place: concurrent builds of the
  // same source each produce a whole file and the last rename wins.
  const std::string tag = "." + std::to_string(::getpid()) + ".tmp";
  const fs::path source_path = dir / (hash + ".cc");
  const fs::path source_tmp = dir / (hash + ".cc" + tag);
  const fs::path library_tmp = dir / (hash + ".so" + tag);
  const fs::path log = dir / (hash + ".log" + tag);
  const auto start = std::chrono::steady_clock::now();
  // The prelude through its precompiled header where there is one.
  std::string compiled = source, include;
  if (const size_t end = source.find(kPreludeEnd); end != std::string::npos) {
    if (std::optional<fs::path> header = prelude_header(dir, compiler, flags, source.substr(0, end))) {
      compiled = source.substr(end);
      include = " -include " + quoted(header->string());
    }
  }
  const auto compile = [&](const std::string& extra) {
    return run_command(quoted(compiler) + " " + flags + extra + " " + quoted(source_path.string()) + " -o " +
                           quoted(library_tmp.string()),
                       log);
  };
  write_text(source_tmp, compiled);
  fs::rename(source_tmp, source_path, ec);
  bool built = compile(include);
  if (!built && !include.empty()) {
    // The header may have been replaced under us (another process found it
    // stale): the whole source alone decides whether the code compiles.
    write_text(source_path, source);
    built = compile("");
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!built || !fs::is_regular_file(library_tmp, ec)) {
    const std::string diagnostics = first_lines(log, 20);
    fs::remove(log, ec);
    fs::remove(library_tmp, ec);
    std::ostringstream message;
    message << "compiling generated kernels failed (" << compiler << ", source " << source_path.string() << "):\n"
            << diagnostics;
    // The machine's fault, not the generated code's.
    for (const char* environment : {"No space left on device", "Cannot allocate memory", "Killed signal"}) {
      if (diagnostics.find(environment) != std::string::npos) throw Error(message.str());
    }
    throw InternalError(message.str());
  }
  fs::remove(log, ec);
  // The record first: a library in place always has one.
  result.sha256 = sha256_of_file(library_tmp.string());
  const fs::path record_tmp = dir / (hash + ".so.sha256" + tag);
  write_text(record_tmp, result.sha256);
  fs::rename(record_tmp, record, ec);
  if (ec) ORCHID_FAIL() << record.string() << ": cannot write the library's SHA-256 (" << ec.message() << ")";
  fs::rename(library_tmp, library, ec);
  if (ec) ORCHID_FAIL() << library.string() << ": cannot move the built library into place (" << ec.message() << ")";
  return result;
}

}  // namespace orchid::codegen::cpu
