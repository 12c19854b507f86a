#include "report/graphviz.h"

#include <spawn.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "support/error.h"

extern char** environ;

namespace orchid::report {

namespace {

namespace fs = std::filesystem;

// A private scratch folder, removed with everything in it when destroyed.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (fs::temp_directory_path() / "orchid-report-XXXXXX").string();
    if (!mkdtemp(pattern.data())) ORCHID_FAIL() << "cannot create a scratch folder under " << fs::temp_directory_path();
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  fs::path operator/(const char* name) const { return path_ / name; }

 private:
  fs::path path_;
};

std::string read_file(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(text.data(), std::streamsize(text.size()));
  if (!file) ORCHID_FAIL() << path.string() << ": cannot write the file";
}

// Runs `argv` (argv[0] looked up on PATH) with stderr to `log`; its exit
// status, or -1 when it was killed by a signal.
int run_program(const std::vector<std::string>& argv, const fs::path& log) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  pid_t pid = 0;
  const int error = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (error == ENOENT) {
    ORCHID_FAIL() << "the report lays out the plan graph with Graphviz, but `" << argv[0]
                  << "` was not found on PATH: install Debian's graphviz (apt-get install graphviz; scripts/setup "
                     "installs it)";
  }
  if (error != 0) ORCHID_FAIL() << "cannot run `" << argv[0] << "`: " << std::strerror(error);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) ORCHID_FAIL() << "waiting for `" << argv[0] << "`: " << std::strerror(errno);
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

void check_graphviz(const std::string& dot_program) {
  ScratchDir dir;
  const int status = run_program({dot_program, "-V"}, dir / "dot.log");
  if (status != 0) {
    ORCHID_FAIL() << "`" << dot_program << " -V` failed (exit status " << status << "): " << read_file(dir / "dot.log");
  }
}

std::string render_svg(const std::string& dot_text, const std::string& dot_program) {
  ScratchDir dir;
  write_file(dir / "plan.dot", dot_text);
  const int status =
      run_program({dot_program, "-Tsvg", (dir / "plan.dot").string(), "-o", (dir / "plan.svg").string()},
                  dir / "dot.log");
  if (status != 0) {
    ORCHID_FAIL() << "`" << dot_program << " -Tsvg` failed (exit status " << status
                  << ") on the plan graph: " << read_file(dir / "dot.log");
  }
  const std::string svg = read_file(dir / "plan.svg");
  const size_t start = svg.find("<svg");
  if (start == std::string::npos) ORCHID_FAIL() << "`" << dot_program << " -Tsvg` wrote no <svg> element";
  return svg.substr(start);
}

}  // namespace orchid::report
