// The profile cache: measured kernel costs in a SQLite database
// (<cache dir>/costs.sqlite by default), keyed by the kernel's content hash
// (kernel_key.h) and the machine fingerprint (machine.h), so later compiles
// reuse them. Several processes may share one database: WAL journal, a busy
// timeout, and upserts, so two `orchid compile` runs both finish correctly.
#pragma once

#include <memory>
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

class CostCache {
 public:
  // Opens or creates the database; orchid::Error naming the path on failure.
  explicit CostCache(const std::string& path);
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

 private:
  std::string path_;
  struct Db;
  std::unique_ptr<Db> db_;
};

}  // namespace orchid::cost
