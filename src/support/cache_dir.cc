#include "support/cache_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "support/error.h"

namespace orchid {

namespace {

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

}  // namespace

std::string private_cache_dir(const std::string& dir) {
  std::error_code error;
  if (!std::filesystem::exists(dir, error)) {
    const std::filesystem::path path(dir);
    if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), error);
    // The leaf is made here, private from the start (mkdir applies the umask).
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
      ORCHID_FAIL() << "cannot create the cache folder " << dir << ": " << std::strerror(errno);
    }
  }
  struct stat info {};
  if (::stat(dir.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
    ORCHID_FAIL() << "the cache folder " << dir << " is not a folder";
  }
  if (info.st_uid != ::geteuid()) {
    ORCHID_FAIL() << "the cache folder " << dir << " belongs to another user (uid " << info.st_uid
                  << "); Orchid loads code from it, so it must be yours: choose another with --cache-dir "
                  << "or $ORCHID_CACHE_DIR";
  }
  if (info.st_mode & (S_IWGRP | S_IWOTH)) {
    ORCHID_FAIL() << "the cache folder " << dir << " can be written by its group or by others; Orchid loads "
                  << "code from it, so it must be private: chmod go-w " << dir << " (or choose another "
                  << "with --cache-dir or $ORCHID_CACHE_DIR)";
  }
  return dir;
}

std::string default_cache_dir() {
  std::string dir = environment("ORCHID_CACHE_DIR");
  if (dir.empty() && !environment("XDG_CACHE_HOME").empty()) dir = environment("XDG_CACHE_HOME") + "/orchid";
  if (dir.empty() && !environment("HOME").empty()) dir = environment("HOME") + "/.cache/orchid";
  if (dir.empty()) dir = "/tmp/orchid-cache-" + std::to_string(::geteuid());
  return private_cache_dir(dir);
}

}  // namespace orchid
