// Online backups: a copy taken while another connection keeps writing is one consistent snapshot
// that passes its integrity check and opens as a store; a failed backup leaves nothing behind.
#include <doctest/doctest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include "store/backup.h"
#include "store/samples.h"
#include "test_support/temp_dir.h"

namespace tailforge {

TEST_CASE("a backup taken while a writer keeps inserting is consistent, checked and complete") {
  TempDir dir;
  std::string source = dir.file("live.db"), target = dir.file("backup.db");
  {
    Database db = Database::open(source).value();
    for (int i = 0; i < 200; ++i) {
      Sample sample{.track = "c2x86", .origin = "template", .language = "c", .text = "int f" + std::to_string(i) + "(void);",
                    .features = {"switch", "float"}};
      REQUIRE(insert_sample_if_absent(db, sample).ok());
    }
  }
  std::atomic<bool> stop{false};
  std::atomic<int> written{0};
  std::thread writer([&] {
    Database db = Database::open(source).value();
    for (int i = 0; !stop; ++i) {
      Sample sample{.track = "c2x86", .origin = "template", .language = "c", .text = "int g" + std::to_string(i) + "(void);"};
      if (insert_sample_if_absent(db, sample).ok()) ++written;
    }
  });
  while (written < 20) std::this_thread::yield();
  Result<BackupSummary> backup = backup_database(source, target);
  stop = true;
  writer.join();
  REQUIRE_MESSAGE(backup.ok(), backup.message());
  CHECK(backup->samples >= 220);
  CHECK(backup->pages > 0);
  CHECK(backup->bytes == static_cast<int64_t>(std::filesystem::file_size(target)));
  CHECK(backup->schema_version == current_schema_version());
  CHECK_FALSE(std::filesystem::exists(target + "-wal"));

  Database copy = Database::open(target).value();
  Result<Statement> count = copy.prepare("SELECT count(*) FROM sample");
  REQUIRE(count->step());
  CHECK(count->int64(0) == backup->samples);
  Database live = Database::open(source).value();
  Result<Statement> live_count = live.prepare("SELECT count(*) FROM sample");
  REQUIRE(live_count->step());
  CHECK(live_count->int64(0) >= backup->samples);
}

TEST_CASE("a backup that cannot be made names why and leaves the old file untouched") {
  TempDir dir;
  CHECK(backup_database(dir.file("missing.db"), dir.file("out.db")).message().find("no database at") != std::string::npos);
  std::string source = dir.file("live.db");
  REQUIRE(Database::open(source).ok());
  std::string target = dir.file("no-such-folder/out.db");
  Result<BackupSummary> failed = backup_database(source, target);
  CHECK_FALSE(failed.ok());
  CHECK(failed.message().find("cannot create") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.file("no-such-folder")));
  // A corrupt source fails its check instead of replacing a good backup.
  std::string good = dir.file("good.db");
  REQUIRE(backup_database(source, good).ok());
  auto before = std::filesystem::file_size(good);
  std::string corrupt = dir.file("corrupt.db");
  std::ofstream(corrupt) << "this is not a database";
  CHECK_FALSE(backup_database(corrupt, good).ok());
  CHECK(std::filesystem::file_size(good) == before);
}

}  // namespace tailforge
