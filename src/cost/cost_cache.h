// The profile cache: measured kernel costs in a SQLite database
// (<cache dir>/costs.sqlite by default), keyed by the kernel's content hash
// (kernel_key.h) and the machine fingerprint (machine.h), so later compiles
// reuse them. Several processes may share one database: WAL journal, a busy
// timeout, and upserts, so two `orchid compile` runs both finish correctly.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace orchid::cost {

// What kind of implementation a kernel has; the analytical model is
// calibrated per class.
enum class KernelClass { Linear, Generated, Library };
const char* kernel_class_name(KernelClass kind);

struct CostRecord {
  double seconds = 0;   // measured median
  double estimate = 0;  // the uncalibrated analytical estimate, for calibration
  KernelClass kind = KernelClass::Library;
};

// The cost database of a cache folder, <cache_dir>/costs.sqlite, the folder
// made private (support/cache_dir.h); in the default folder when empty.
std::string cost_cache_path(const std::string& cache_dir);

// A cache must never stop a compile nor change a plan's correctness (costs
// only choose between correct kernels), so faults degrade it, with a warning
// on stderr: a file that is not a database, or a corrupt one, is moved aside
// (<path>.corrupt-<time>) and a new one created; a database that stays
// locked, cannot be opened or fails mid-compile is replaced by an in-memory
// one for the rest of the process (costs are measured, not kept).
class CostCache {
 public:
  // Opens or creates the database at `path`, waiting up to `busy_timeout_ms`
  // for another process's lock.
  explicit CostCache(const std::string& path, int busy_timeout_ms = 30000);
  ~CostCache();
  CostCache(const CostCache&) = delete;
  CostCache& operator=(const CostCache&) = delete;

  std::optional<CostRecord> lookup(const std::string& key, const std::string& machine) const;
  void store(const std::string& key, const std::string& machine, const CostRecord& record);
  // Every record of one machine (calibration).
  std::vector<CostRecord> records(const std::string& machine) const;
  // Small named values per machine (the measured peaks).
  std::optional<std::string> get_meta(const std::string& machine, const std::string& name) const;
  void set_meta(const std::string& machine, const std::string& name, const std::string& value);

  const std::string& path() const { return path_; }
  // Whether a fault made this cache fall back to memory.
  bool bypassed() const { return bypassed_; }

 private:
  struct Db;  // the SQLite connection (cost_cache.cc)
  static std::unique_ptr<Db> open_db(const std::string& path, int busy_timeout_ms);

  // Runs `query` on the database; on a fault, warns, falls back to memory and
  // runs it again there.
  template <typename Query>
  auto guarded(Query query) const -> decltype(query(std::declval<Db&>()));
  void bypass(const std::string& why) const;

  std::string path_;
  mutable std::mutex mutex_;
  mutable std::unique_ptr<Db> db_;
  mutable bool bypassed_ = false;
};

}  // namespace orchid::cost
