#include "store/backup.h"

#include <sqlite3.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "base/clock.h"
#include "store/database.h"
#include "store/maintenance.h"

namespace tailforge {
namespace {

namespace fs = std::filesystem;

// The open destination connection; closed when done.
struct Destination {
  sqlite3* handle = nullptr;
  ~Destination() {
    if (handle) sqlite3_close(handle);
  }
};

}  // namespace

Result<BackupSummary> backup_database(const std::string& source, const std::string& target) {
  auto start = std::chrono::steady_clock::now();
  if (!fs::exists(source)) return make_error("backup: no database at " + source);
  Result<Database> db = Database::open(source);  // migrates an old file first, like every command
  if (!db) return make_error("backup: " + db.message());
  std::string partial = target + ".partial-" + std::to_string(getpid());
  std::error_code ignored;
  fs::remove(partial, ignored);
  auto fail = [&](const std::string& what) -> Result<BackupSummary> {
    fs::remove(partial, ignored);
    return make_error("backup of " + source + " to " + target + ": " + what);
  };
  BackupSummary summary;
  {
    Destination destination;
    if (sqlite3_open_v2(partial.c_str(), &destination.handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
        SQLITE_OK) {
      return fail(std::string("cannot create ") + partial + ": " + sqlite3_errmsg(destination.handle));
    }
    sqlite3_backup* backup = sqlite3_backup_init(destination.handle, "main", db->handle(), "main");
    if (!backup) return fail(sqlite3_errmsg(destination.handle));
    // All pages in one step: one read transaction, so the copy is one consistent snapshot; under
    // WAL the daemon's writers go on meanwhile.
    int rc = sqlite3_backup_step(backup, -1);
    summary.pages = sqlite3_backup_pagecount(backup);
    int finished = sqlite3_backup_finish(backup);
    if (rc != SQLITE_DONE) return fail(std::string("copying pages: ") + sqlite3_errstr(rc));
    if (finished != SQLITE_OK) return fail(sqlite3_errmsg(destination.handle));
  }
  {
    // Checked, and closed (its WAL folded back into the file) before it takes the target's name.
    Result<Database> copy = Database::open(partial);
    if (!copy) return fail(copy.message());
    Result<std::vector<std::string>> problems = integrity_problems(*copy);
    if (!problems) return fail(problems.message());
    if (!problems->empty()) return fail("the copy fails its integrity check: " + problems->front());
    Result<Statement> samples = copy->prepare("SELECT count(*) FROM sample");
    if (!samples || !samples->step()) return fail("cannot count the copy's samples");
    summary.samples = samples->int64(0);
    summary.schema_version = copy->schema_version();
  }
  // A WAL left by an earlier database of that name would be replayed into the copy: drop it.
  fs::remove(target + "-wal", ignored);
  fs::remove(target + "-shm", ignored);
  fs::rename(partial, target, ignored);
  if (ignored) return fail("cannot rename " + partial + ": " + ignored.message());
  summary.path = target;
  summary.bytes = static_cast<int64_t>(fs::file_size(target, ignored));
  summary.seconds = seconds_since(start);
  return summary;
}

}  // namespace tailforge
