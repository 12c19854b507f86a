#include "cost/cost_cache.h"

#include <sqlite3.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <thread>

#include "support/cache_dir.h"
#include "support/error.h"

namespace orchid::cost {

namespace {

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

bool is_corruption(int rc) {
  int primary = rc & 0xff;
  return primary == SQLITE_NOTADB || primary == SQLITE_CORRUPT;
}

// SQLite's busy handler covers waiting for a lock, but a few paths return
// SQLITE_BUSY at once (switching the journal mode while another connection
// opens the file, WAL recovery); those are retried here until the same
// deadline.
template <typename Attempt>
int retry_while_busy(int timeout_ms, Attempt attempt) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
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

// One connection with its prepared statements. CostCache's mutex makes one
// CostCache usable from several threads; separate CostCaches (connections,
// processes) coordinate through SQLite's file locks.
struct CostCache::Db {
  std::string path;
  int busy_timeout_ms = 0;  // how long to wait for another process's lock
  sqlite3* db = nullptr;
  sqlite3_stmt* lookup = nullptr;
  sqlite3_stmt* store = nullptr;
  sqlite3_stmt* records = nullptr;
  sqlite3_stmt* get_meta = nullptr;
  sqlite3_stmt* set_meta = nullptr;

  ~Db() {
    for (sqlite3_stmt* statement : {lookup, store, records, get_meta, set_meta}) sqlite3_finalize(statement);
    sqlite3_close_v2(db);
  }

  // A fault of the database: its SQLite result code and message.
  struct Fault : Error {
    int rc;
    Fault(int code, const std::string& message) : Error(message), rc(code) {}
  };

  [[noreturn]] void fail(const std::string& what) const {
    throw Fault(db ? sqlite3_extended_errcode(db) : SQLITE_NOMEM,
                "cost cache " + path + ": " + what + ": " + (db ? sqlite3_errmsg(db) : "out of memory"));
  }

  void open() {
    int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                             nullptr);
    if (rc != SQLITE_OK) fail("cannot open");
    sqlite3_busy_timeout(db, busy_timeout_ms);
    // WAL lets readers proceed while another process writes; NORMAL
    // synchronous is durable enough for a cache (a lost record is re-measured).
    exec("PRAGMA journal_mode=WAL");
    exec("PRAGMA synchronous=NORMAL");
    exec(kSchema);
    lookup = prepare("SELECT seconds, estimate, class FROM costs WHERE key = ?1 AND machine = ?2");
    store = prepare("INSERT OR REPLACE INTO costs (key, machine, class, seconds, estimate) VALUES (?1, ?2, ?3, ?4, ?5)");
    records = prepare("SELECT seconds, estimate, class FROM costs WHERE machine = ?1");
    get_meta = prepare("SELECT value FROM meta WHERE machine = ?1 AND name = ?2");
    set_meta = prepare("INSERT OR REPLACE INTO meta (machine, name, value) VALUES (?1, ?2, ?3)");
  }

  void exec(const char* sql) {
    int rc = retry_while_busy(busy_timeout_ms, [&] { return sqlite3_exec(db, sql, nullptr, nullptr, nullptr); });
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
    int rc = first_step ? retry_while_busy(busy_timeout_ms, attempt) : sqlite3_step(statement);
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

std::unique_ptr<CostCache::Db> CostCache::open_db(const std::string& path, int busy_timeout_ms) {
  auto db = std::make_unique<CostCache::Db>();
  db->path = path;
  db->busy_timeout_ms = busy_timeout_ms;
  db->open();
  return db;
}

std::string cost_cache_path(const std::string& cache_dir) {
  return (cache_dir.empty() ? default_cache_dir() : private_cache_dir(cache_dir)) + "/costs.sqlite";
}

CostCache::CostCache(const std::string& path, int busy_timeout_ms) : path_(path) {
  try {
    create_parent_folder(path);
    db_ = open_db(path, busy_timeout_ms);
    return;
  } catch (const Db::Fault& fault) {
    if (!is_corruption(fault.rc)) {
      bypass(fault.what());
      return;
    }
    // Not a database, or a damaged one: kept aside for a look, replaced.
    const std::string aside = path + ".corrupt-" + std::to_string(std::time(nullptr));
    std::error_code error;
    std::filesystem::rename(path, aside, error);
    for (const char* suffix : {"-wal", "-shm"}) std::filesystem::remove(path + suffix, error);
    std::cerr << "warning: " << fault.what() << "; moved it to " << aside << " and started a new cost cache\n";
  } catch (const Error& error) {  // the folder cannot be made
    bypass(error.what());
    return;
  }
  try {
    db_ = open_db(path, busy_timeout_ms);
  } catch (const Db::Fault& fault) {
    bypass(fault.what());
  }
}

void CostCache::bypass(const std::string& why) const {
  std::cerr << "warning: " << why << "; measured costs are kept in memory only for this run\n";
  db_.reset();
  db_ = open_db(":memory:", 0);
  bypassed_ = true;
}

template <typename Query>
auto CostCache::guarded(Query query) const -> decltype(query(std::declval<Db&>())) {
  std::lock_guard lock(mutex_);
  try {
    return query(*db_);
  } catch (const Db::Fault& fault) {
    if (bypassed_) throw;  // the in-memory database failed: a real bug
    bypass(fault.what());
    return query(*db_);
  }
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
  return guarded([&](Db& db) -> std::optional<CostRecord> {
    StatementReset reset{db.lookup};
    db.bind_text(db.lookup, 1, key);
    db.bind_text(db.lookup, 2, machine);
    if (db.step(db.lookup) != SQLITE_ROW) return std::nullopt;
    return read_record(db.lookup);
  });
}

void CostCache::store(const std::string& key, const std::string& machine, const CostRecord& record) {
  guarded([&](Db& db) {
    StatementReset reset{db.store};
    db.bind_text(db.store, 1, key);
    db.bind_text(db.store, 2, machine);
    db.bind_text(db.store, 3, kernel_class_name(record.kind));
    db.bind_double(db.store, 4, record.seconds);
    db.bind_double(db.store, 5, record.estimate);
    db.step(db.store);
  });
}

std::vector<CostRecord> CostCache::records(const std::string& machine) const {
  return guarded([&](Db& db) {
    StatementReset reset{db.records};
    db.bind_text(db.records, 1, machine);
    std::vector<CostRecord> result;
    for (bool first = true; db.step(db.records, first) == SQLITE_ROW; first = false) {
      if (std::optional<CostRecord> record = read_record(db.records)) result.push_back(*record);
    }
    return result;
  });
}

std::optional<std::string> CostCache::get_meta(const std::string& machine, const std::string& name) const {
  return guarded([&](Db& db) -> std::optional<std::string> {
    StatementReset reset{db.get_meta};
    db.bind_text(db.get_meta, 1, machine);
    db.bind_text(db.get_meta, 2, name);
    if (db.step(db.get_meta) != SQLITE_ROW) return std::nullopt;
    return column_text(db.get_meta, 0);
  });
}

void CostCache::set_meta(const std::string& machine, const std::string& name, const std::string& value) {
  guarded([&](Db& db) {
    StatementReset reset{db.set_meta};
    db.bind_text(db.set_meta, 1, machine);
    db.bind_text(db.set_meta, 2, name);
    db.bind_text(db.set_meta, 3, value);
    db.step(db.set_meta);
  });
}

}  // namespace orchid::cost
