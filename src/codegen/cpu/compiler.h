// Builds generated C++ into a shared object with the system compiler (the one
// that built Orchid, with its flags plus -O3 -fPIC -shared -fopenmp), cached
// by content: <cache_dir>/kernels/<hash>.so where the hash covers the source,
// the compiler and the flags. A second compile of the same model reuses it.
// Several processes building the same source at once is safe (each writes a
// temporary file and renames it into place). Beside each library,
// <hash>.so.sha256 holds the SHA-256 of the file as built: a cached library
// whose bytes no longer match is built again, and loading checks it too
// (runtime::cpu::SharedLibrary). The cache folder is private (cache_dir.h).
#pragma once

#include <string>

namespace orchid::codegen::cpu {

struct BuildResult {
  std::string library_path;
  std::string sha256;    // of the library file as built
  bool cached = false;   // found in the cache, nothing compiled
  double seconds = 0;    // time spent compiling
};

// A source that contains this line is compiled in two parts: everything
// before it (the prelude: includes and inline math, the same for every
// library) as a precompiled header, built once per compiler, flags and
// prelude into <cache_dir>/kernels/prelude-<hash>/ and checked against its
// recorded SHA-256 before each use; the rest on its own, which takes about
// a third of the time. Without the line, or when the header cannot be
// built, the source is compiled whole.
inline constexpr const char* kPreludeEnd = "// ---- end of the prelude ----\n";

// Compiles `source`. Orchid generated it, so a compile error is an Orchid bug:
// orchid::InternalError with the compiler's diagnostics and the source's
// path (orchid::Error when the machine is at fault: no space left, no memory).
BuildResult build_library(const std::string& source, const std::string& cache_dir);

// The compiler generated kernels are built with: $ORCHID_KERNEL_CXX, else the
// one that built Orchid.
std::string kernel_compiler();

// Whether kernel_compiler() runs (`--version`), checked once per process.
// When it does not, a warning says so once, and orchestration offers no
// generated candidates: every kernel comes from the library.
bool compiler_available();

}  // namespace orchid::codegen::cpu
