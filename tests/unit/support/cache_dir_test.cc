// The cache folder holds code later processes load: it is made private and a
// folder others can write is refused.
#include "support/cache_dir.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "support/error.h"
#include "../test_temp_dir.h"

namespace orchid {
namespace {

namespace fs = std::filesystem;

fs::path fresh_folder(const std::string& name) {
  fs::path dir = orchid::testing::process_temp_dir("orchid-cache-dir-test") / name;
  fs::remove_all(dir);
  return dir;
}

mode_t mode_of(const fs::path& dir) {
  struct stat info {};
  EXPECT_EQ(::stat(dir.c_str(), &info), 0);
  return info.st_mode & 0777;
}

TEST(CacheDir, CreatedPrivate) {
  const fs::path dir = fresh_folder("new") / "orchid";
  EXPECT_EQ(private_cache_dir(dir.string()), dir.string());
  EXPECT_EQ(mode_of(dir), mode_t(0700));
  EXPECT_EQ(private_cache_dir(dir.string()), dir.string());  // an existing private folder is fine
}

TEST(CacheDir, WritableByOthersIsRefused) {
  for (mode_t mode : {mode_t(0777), mode_t(0770), mode_t(0702)}) {
    const fs::path dir = fresh_folder("shared");
    fs::create_directories(dir);
    ASSERT_EQ(::chmod(dir.c_str(), mode), 0);
    try {
      private_cache_dir(dir.string());
      FAIL() << "expected orchid::Error for mode " << std::oct << mode;
    } catch (const Error& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find(dir.string()), std::string::npos) << message;
      EXPECT_NE(message.find("chmod go-w"), std::string::npos) << message;
    }
  }
}

TEST(CacheDir, ReadableByOthersIsAccepted) {
  const fs::path dir = fresh_folder("readable");
  fs::create_directories(dir);
  ASSERT_EQ(::chmod(dir.c_str(), 0755), 0);
  EXPECT_NO_THROW(private_cache_dir(dir.string()));
}

TEST(CacheDir, AFileIsNotAFolder) {
  const fs::path file = fresh_folder("file");
  fs::create_directories(file.parent_path());
  { std::FILE* f = std::fopen(file.c_str(), "w"); std::fclose(f); }
  EXPECT_THROW(private_cache_dir(file.string()), Error);
}

}  // namespace
}  // namespace orchid
