#include "cost/cost_cache.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "cost_test_util.h"
#include "support/error.h"

namespace orchid::cost {
namespace {

using testing::TempDir;

TEST(CostCache, RoundTripsRecordsAndCreatesTheFolder) {
  TempDir dir;
  const std::string path = dir.file("nested/folder/costs.sqlite");
  {
    CostCache cache(path);
    EXPECT_EQ(cache.path(), path);
    EXPECT_FALSE(cache.lookup("k1", "m1"));
    cache.store("k1", "m1", CostRecord{1.5e-3, 1e-3, KernelClass::Linear});
  }
  CostCache reopened(path);  // survives closing the connection
  std::optional<CostRecord> record = reopened.lookup("k1", "m1");
  ASSERT_TRUE(record);
  EXPECT_DOUBLE_EQ(record->seconds, 1.5e-3);
  EXPECT_DOUBLE_EQ(record->estimate, 1e-3);
  EXPECT_EQ(record->kind, KernelClass::Linear);
  EXPECT_FALSE(reopened.lookup("k1", "another machine"));
  EXPECT_FALSE(reopened.lookup("k2", "m1"));
}

TEST(CostCache, StoreOverwritesTheSameKeyAndMachine) {
  TempDir dir;
  CostCache cache(dir.file("costs.sqlite"));
  cache.store("k", "m", CostRecord{1.0, 2.0, KernelClass::Library});
  cache.store("k", "m", CostRecord{3.0, 4.0, KernelClass::Generated});
  std::optional<CostRecord> record = cache.lookup("k", "m");
  ASSERT_TRUE(record);
  EXPECT_DOUBLE_EQ(record->seconds, 3.0);
  EXPECT_DOUBLE_EQ(record->estimate, 4.0);
  EXPECT_EQ(record->kind, KernelClass::Generated);
  EXPECT_EQ(cache.records("m").size(), 1u);
}

TEST(CostCache, RecordsFiltersByMachine) {
  TempDir dir;
  CostCache cache(dir.file("costs.sqlite"));
  cache.store("a", "m1", CostRecord{1.0, 1.0, KernelClass::Library});
  cache.store("b", "m1", CostRecord{2.0, 1.0, KernelClass::Linear});
  cache.store("a", "m2", CostRecord{7.0, 1.0, KernelClass::Library});
  std::vector<CostRecord> m1 = cache.records("m1");
  ASSERT_EQ(m1.size(), 2u);
  std::multiset<double> seconds{m1[0].seconds, m1[1].seconds};
  EXPECT_EQ(seconds, (std::multiset<double>{1.0, 2.0}));
  EXPECT_EQ(cache.records("m2").size(), 1u);
  EXPECT_TRUE(cache.records("m3").empty());
}

TEST(CostCache, MetaIsPerMachineAndOverwritable) {
  TempDir dir;
  CostCache cache(dir.file("costs.sqlite"));
  EXPECT_FALSE(cache.get_meta("m1", "peak"));
  cache.set_meta("m1", "peak", "12.5");
  cache.set_meta("m2", "peak", "99");
  EXPECT_EQ(cache.get_meta("m1", "peak"), "12.5");
  EXPECT_EQ(cache.get_meta("m2", "peak"), "99");
  cache.set_meta("m1", "peak", "13");
  EXPECT_EQ(cache.get_meta("m1", "peak"), "13");
  EXPECT_FALSE(cache.get_meta("m1", "other"));
}

TEST(CostCache, ClassNamesAreDistinct) {
  EXPECT_STREQ(kernel_class_name(KernelClass::Linear), "linear");
  EXPECT_STREQ(kernel_class_name(KernelClass::Generated), "generated");
  EXPECT_STREQ(kernel_class_name(KernelClass::Library), "library");
}

// Stores `count` records whose keys start with `prefix`.
void store_many(const std::string& path, const std::string& prefix, int count) {
  CostCache cache(path);
  for (int i = 0; i < count; ++i) {
    cache.store(prefix + std::to_string(i), "m", CostRecord{double(i + 1), 1.0, KernelClass::Generated});
  }
}

TEST(CostCache, ConnectionsInSeveralThreadsShareOneFile) {
  TempDir dir;
  const std::string path = dir.file("costs.sqlite");
  CostCache(path).set_meta("m", "created", "yes");  // the file exists before the race, as after a first compile
  std::atomic<bool> writing{true};
  std::atomic<int> failures{0};
  auto guarded = [&](auto body) {
    return [&failures, body] {
      try {
        body();
      } catch (const std::exception& e) {
        ADD_FAILURE() << e.what();
        ++failures;
      }
    };
  };
  std::thread reader(guarded([&] {
    CostCache cache(path);
    while (writing) {
      cache.lookup("a1", "m");
      cache.records("m");
    }
  }));
  std::thread first(guarded([&] { store_many(path, "a", 500); }));
  std::thread second(guarded([&] { store_many(path, "b", 500); }));
  first.join();
  second.join();
  writing = false;
  reader.join();
  EXPECT_EQ(failures, 0);
  CostCache cache(path);
  EXPECT_EQ(cache.records("m").size(), 1000u);
  EXPECT_TRUE(cache.lookup("a499", "m"));
  EXPECT_TRUE(cache.lookup("b0", "m"));
}

TEST(CostCache, SeveralProcessesShareOneFile) {
  TempDir dir;
  const std::string path = dir.file("costs.sqlite");  // created by the racing children themselves
  std::vector<pid_t> children;
  for (const char* prefix : {"p", "q"}) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int status = 0;
      try {
        store_many(path, prefix, 300);
      } catch (...) {
        status = 1;
      }
      _exit(status);  // no gtest or static destructors in the child
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child exited with status " << status;
  }
  EXPECT_EQ(CostCache(path).records("m").size(), 600u);
}

// ---- Faults: a cache never stops a compile ----

TEST(CostCache, AFileThatIsNotADatabaseIsMovedAsideAndReplaced) {
  TempDir dir;
  const std::string path = dir.file("costs.sqlite");
  std::ofstream(path) << std::string(8192, 'x');  // not SQLite
  CostCache cache(path);
  EXPECT_FALSE(cache.bypassed());
  cache.store("k", "m", CostRecord{2e-3, 1e-3, KernelClass::Generated});
  ASSERT_TRUE(cache.lookup("k", "m"));
  int aside = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.file("")))
    aside += entry.path().filename().string().rfind("costs.sqlite.corrupt-", 0) == 0;
  EXPECT_EQ(aside, 1);
  EXPECT_TRUE(CostCache(path).lookup("k", "m"));  // the new database persists
}

TEST(CostCache, ADamagedDatabaseIsReplaced) {
  TempDir dir;
  const std::string path = dir.file("costs.sqlite");
  { CostCache(path).store("k", "m", CostRecord{1e-3, 1e-3, KernelClass::Library}); }
  {
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(0);
    file << "definitely not the SQLite header";  // the header names the format
  }
  CostCache cache(path);
  EXPECT_FALSE(cache.bypassed());
  EXPECT_FALSE(cache.lookup("k", "m"));  // the old costs are gone, not misread
  cache.store("k", "m", CostRecord{1e-3, 1e-3, KernelClass::Library});
  EXPECT_TRUE(cache.lookup("k", "m"));
}

// Another process holds the database locked: after the busy timeout the
// cache works from memory instead of failing the compile.
TEST(CostCache, ALockedDatabaseIsBypassed) {
  TempDir dir;
  const std::string path = dir.file("costs.sqlite");
  sqlite3* holder = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &holder), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(holder, "PRAGMA locking_mode=EXCLUSIVE; CREATE TABLE t(x); BEGIN EXCLUSIVE; "
                                 "INSERT INTO t VALUES (1);", nullptr, nullptr, nullptr),
            SQLITE_OK);
  CostCache cache(path, /*busy_timeout_ms=*/200);
  EXPECT_TRUE(cache.bypassed());
  cache.store("k", "m", CostRecord{1e-3, 1e-3, KernelClass::Linear});
  EXPECT_TRUE(cache.lookup("k", "m"));
  sqlite3_close(holder);
}

// The lock is taken after the cache opened, in the middle of a compile: the
// next query times out, the cache falls back to memory and the compile goes
// on (the costs it measures from then on are not kept).
TEST(CostCache, ALockTakenMidRunIsBypassed) {
  TempDir dir;
  const std::string path = dir.file("costs.sqlite");
  CostCache cache(path, /*busy_timeout_ms=*/200);
  cache.store("before", "m", CostRecord{1e-3, 1e-3, KernelClass::Linear});
  ASSERT_FALSE(cache.bypassed());
  sqlite3* holder = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &holder), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(holder, "BEGIN IMMEDIATE; DELETE FROM costs;", nullptr,
                         nullptr, nullptr),
            SQLITE_OK);
  cache.store("during", "m", CostRecord{2e-3, 2e-3, KernelClass::Generated});
  EXPECT_TRUE(cache.bypassed());
  const std::optional<CostRecord> during = cache.lookup("during", "m");
  ASSERT_TRUE(during);
  EXPECT_EQ(during->seconds, 2e-3);
  EXPECT_FALSE(cache.lookup("before", "m"));  // not readable now: measured again, never misread
  sqlite3_exec(holder, "ROLLBACK;", nullptr, nullptr, nullptr);
  sqlite3_close(holder);
  EXPECT_TRUE(CostCache(path).lookup("before", "m"));  // the file itself is intact
}

// A folder that cannot be made (a file stands in the way): memory again.
TEST(CostCache, AnUncreatableFolderIsBypassed) {
  TempDir dir;
  std::ofstream(dir.file("blocker")) << "a file";
  CostCache cache(dir.file("blocker/costs.sqlite"));
  EXPECT_TRUE(cache.bypassed());
  cache.set_meta("m", "peak", "1");
  EXPECT_EQ(cache.get_meta("m", "peak"), "1");
}

}  // namespace
}  // namespace orchid::cost
