#include "cost/cost_cache.h"

#include <sqlite3.h>

#include <chrono>
#include <filesystem>
#include <mutex>
#include <thread>

#include "support/error.h"

namespace orchid::cost {

namespace {

// How long a connection waits for another writer (another thread or
// `orchid compile` process on the same file) before giving up. Writes are
// single small upserts, so waiting this long means something is stuck.
constexpr int kBusyTimeoutMs = 30000;

const char* const kSchema =
    "CREATE TABLE IF NOT EXISTS costs ("
    "  key TEXT NOT NULL, machine TEXT NOT NULL, class TEXT NOT NULL,"
    "  seconds REAL NOT NULL, estimate REAL NOT NULL,"
    "  PRIMARY KEY (key, machine));"
    "CREATE TABLE IF NOT EXISTS meta ("
    "  machine TEXT NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL,"
    "  PRIMARY KEY (machine, name));";

bool is_busy(int rc) {
  int primary = rc & 0xff;
  return primary == SQLITE_BUSY || primary == SQLITE_LOCKED;
}

// SQLite's busy handler covers waiting for a lock, but a few paths return
// SQLITE_BUSY at once (switching the journal mode while another connection
// opens the file, WAL recovery); those are retried here until the same
// deadline.
template <typename Attempt>
int retry_while_busy(Attempt attempt) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kBusyTimeoutMs);
  int rc = attempt();
  while (is_busy(rc) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    rc = attempt();
  }
  return rc;
}

std::optional<KernelClass> kernel_class_from_name(const std::string& name) {
  for (KernelClass kind : {KernelClass::Linear, KernelClass::Generated, KernelClass::Library}) {
    if (name == kernel_class_name(kind)) return kind;
  }
  return std::nullopt;
}

std::string column_text(sqlite3_stmt* statement, int column) {
  const unsigned char* text = sqlite3_column_text(statement, column);
  return text ? reinterpret_cast<const char*>(text) : "";
}

}  // namespace

const char* kernel_class_name(KernelClass kind) {
  switch (kind) {
    case KernelClass::Linear:
      return "linear";
    case KernelClass::Generated:
      return "generated";
    case KernelClass::Library:
      return "library";
  }
  return "unknown";
}

// One connection with its prepared statements. A mutex makes one CostCache
// usable from several threads; separate CostCaches (connections, processes)
// coordinate through SQLite's file locks.
struct CostCache::Db {
  std::string path;
  sqlite3* db = nullptr;
  sqlite3_stmt* lookup = nullptr;
  sqlite3_stmt* store = nullptr;
  sqlite3_stmt* records = nullptr;
  sqlite3_stmt* get_meta = nullptr;
  sqlite3_stmt* set_meta = nullptr;
  std::mutex mutex;

  ~Db() {
    for (sqlite3_stmt* statement : {lookup, store, records, get_meta, set_meta}) sqlite3_finalize(statement);
    sqlite3_close_v2(db);
  }

  [[noreturn]] void fail(const std::string& what) const {
    ORCHID_FAIL() << "cost cache " << path << ": " << what << ": " << (db ? sqlite3_errmsg(db) : "out of memory");
  }

  void exec(const char* sql) {
    int rc = retry_while_busy([&] { return sqlite3_exec(db, sql, nullptr, nullptr, nullptr); });
    if (rc != SQLITE_OK) fail(std::string("cannot run `") + sql + "`");
  }

  sqlite3_stmt* prepare(const char* sql) {
    sqlite3_stmt* statement = nullptr;
    if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &statement, nullptr) != SQLITE_OK) {
      fail(std::string("cannot prepare `") + sql + "`");
    }
    return statement;
  }

  // Steps a statement once; SQLITE_ROW or SQLITE_DONE, anything else throws.
  // Only a statement's first step retries when busy: a retry restarts the
  // statement, which would repeat the rows already returned (and in WAL mode
  // a read that has started is never busy).
  int step(sqlite3_stmt* statement, bool first_step = true) {
    auto attempt = [&] {
      int rc = sqlite3_step(statement);
      if (is_busy(rc)) sqlite3_reset(statement);  // a busy statement must be reset before a retry
      return rc;
    };
    int rc = first_step ? retry_while_busy(attempt) : sqlite3_step(statement);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
      sqlite3_reset(statement);
      fail("query failed");
    }
    return rc;
  }

  void bind_text(sqlite3_stmt* statement, int index, const std::string& text) {
    if (sqlite3_bind_text(statement, index, text.data(), int(text.size()), SQLITE_TRANSIENT) != SQLITE_OK) {
      fail("cannot bind a parameter");
    }
  }

  void bind_double(sqlite3_stmt* statement, int index, double value) {
    if (sqlite3_bind_double(statement, index, value) != SQLITE_OK) fail("cannot bind a parameter");
  }
};

namespace {

// Resets a statement (and its bindings) on scope exit, so that the read
// transaction it holds ends and the statement can be reused.
struct StatementReset {
  sqlite3_stmt* statement;
  ~StatementReset() {
    sqlite3_reset(statement);
    sqlite3_clear_bindings(statement);
  }
};

void create_parent_folder(const std::string& path) {
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (parent.empty()) return;
  std::error_code error;
  std::filesystem::create_directories(parent, error);
  if (error)
    ORCHID_FAIL() << "cost cache " << path << ": cannot create folder " << parent.string() << ": " << error.message();
}

}  // namespace

CostCache::CostCache(const std::string& path) : path_(path), db_(std::make_unique<Db>()) {
  db_->path = path;
  create_parent_folder(path);
  int rc = sqlite3_open_v2(path.c_str(), &db_->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                           nullptr);
  if (rc != SQLITE_OK) db_->fail("cannot open");
  sqlite3_busy_timeout(db_->db, kBusyTimeoutMs);
  // WAL lets readers proceed while another process writes; NORMAL
  // synchronous is durable enough for a cache (a lost record is re-measured).
  db_->exec("PRAGMA journal_mode=WAL");
  db_->exec("PRAGMA synchronous=NORMAL");
  db_->exec(kSchema);
  db_->lookup = db_->prepare("SELECT seconds, estimate, class FROM costs WHERE key = ?1 AND machine = ?2");
  db_->store =
      db_->prepare("INSERT OR REPLACE INTO costs (key, machine, class, seconds, estimate) VALUES (?1, ?2, ?3, ?4, ?5)");
  db_->records = db_->prepare("SELECT seconds, estimate, class FROM costs WHERE machine = ?1");
  db_->get_meta = db_->prepare("SELECT value FROM meta WHERE machine = ?1 AND name = ?2");
  db_->set_meta = db_->prepare("INSERT OR REPLACE INTO meta (machine, name, value) VALUES (?1, ?2, ?3)");
}

CostCache::~CostCache() = default;

namespace {

// A CostRecord from the current row of (seconds, estimate, class); nullopt
// for a class this version does not know (a newer Orchid wrote it).
std::optional<CostRecord> read_record(sqlite3_stmt* statement) {
  std::optional<KernelClass> kind = kernel_class_from_name(column_text(statement, 2));
  if (!kind) return std::nullopt;
  return CostRecord{sqlite3_column_double(statement, 0), sqlite3_column_double(statement, 1), *kind};
}

}  // namespace

std::optional<CostRecord> CostCache::lookup(const std::string& key, const std::string& machine) const {
  std::lock_guard lock(db_->mutex);
  sqlite3_stmt* statement = db_->lookup;
  StatementReset reset{statement};
  db_->bind_text(statement, 1, key);
  db_->bind_text(statement, 2, machine);
  if (db_->step(statement) != SQLITE_ROW) return std::nullopt;
  return read_record(statement);
}

void CostCache::store(const std::string& key, const std::string& machine, const CostRecord& record) {
  std::lock_guard lock(db_->mutex);
  sqlite3_stmt* statement = db_->store;
  StatementReset reset{statement};
  db_->bind_text(statement, 1, key);
  db_->bind_text(statement, 2, machine);
  db_->bind_text(statement, 3, kernel_class_name(record.kind));
  db_->bind_double(statement, 4, record.seconds);
  db_->bind_double(statement, 5, record.estimate);
  db_->step(statement);
}

std::vector<CostRecord> CostCache::records(const std::string& machine) const {
  std::lock_guard lock(db_->mutex);
  sqlite3_stmt* statement = db_->records;
  StatementReset reset{statement};
  db_->bind_text(statement, 1, machine);
  std::vector<CostRecord> result;
  for (bool first = true; db_->step(statement, first) == SQLITE_ROW; first = false) {
    if (std::optional<CostRecord> record = read_record(statement)) result.push_back(*record);
  }
  return result;
}

std::optional<std::string> CostCache::get_meta(const std::string& machine, const std::string& name) const {
  std::lock_guard lock(db_->mutex);
  sqlite3_stmt* statement = db_->get_meta;
  StatementReset reset{statement};
  db_->bind_text(statement, 1, machine);
  db_->bind_text(statement, 2, name);
  if (db_->step(statement) != SQLITE_ROW) return std::nullopt;
  return column_text(statement, 0);
}

void CostCache::set_meta(const std::string& machine, const std::string& name, const std::string& value) {
  std::lock_guard lock(db_->mutex);
  sqlite3_stmt* statement = db_->set_meta;
  StatementReset reset{statement};
  db_->bind_text(statement, 1, machine);
  db_->bind_text(statement, 2, name);
  db_->bind_text(statement, 3, value);
  db_->step(statement);
}

}  // namespace orchid::cost
