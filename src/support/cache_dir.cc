#include "support/cache_dir.h"

#include <cstdlib>
#include <filesystem>

#include "support/error.h"

namespace orchid {

namespace {

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

}  // namespace

std::string default_cache_dir() {
  std::string dir = environment("ORCHID_CACHE_DIR");
  if (dir.empty() && !environment("XDG_CACHE_HOME").empty()) dir = environment("XDG_CACHE_HOME") + "/orchid";
  if (dir.empty() && !environment("HOME").empty()) dir = environment("HOME") + "/.cache/orchid";
  if (dir.empty()) dir = "/tmp/orchid-cache";
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) ORCHID_FAIL() << "cannot create the cache folder " << dir << ": " << error.message();
  return dir;
}

}  // namespace orchid
