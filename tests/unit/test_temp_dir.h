// Scratch folders for tests, removed when they go out of scope. ctest runs
// every test in a process of its own, so a folder a test leaves behind is
// left once per test: the orchestration tests' cost caches alone piled up
// ~50 MB per process in /tmp before these were shared.
#pragma once

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <string>

namespace orchid::testing {

// A fresh, empty folder under the system temp directory (unique to the
// process and the object), removed with everything in it on destruction.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "orchid-test") {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            (prefix + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // A path inside the folder (not created).
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// One folder per process and prefix, for tests that share a cache across
// the process's tests; removed at exit.
inline const std::filesystem::path& process_temp_dir(const std::string& prefix) {
  static std::map<std::string, std::unique_ptr<TempDir>> dirs;
  std::unique_ptr<TempDir>& dir = dirs[prefix];
  if (!dir) dir = std::make_unique<TempDir>(prefix);
  return dir->path();
}

}  // namespace orchid::testing
