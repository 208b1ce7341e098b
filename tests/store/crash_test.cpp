#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "store/queue.h"
#include "store/samples.h"
#include "test_support/temp_dir.h"

using namespace tailforge;

namespace {

// In a child process: lease the job, then insert samples inside an open transaction and tell
// the parent (one byte on `ready`) before pausing forever, mid-transaction.
[[noreturn]] void lease_and_hang(const std::string& path, int ready) {
  Result<Database> db = Database::open(path);
  if (!db) _exit(3);
  JobQueue queue(*db);
  Result<std::optional<Job>> job = queue.lease("doomed-child", 60000);
  if (!job || !job->has_value()) _exit(4);
  Transaction transaction(*db);
  for (int i = 0; i < 500; ++i) {
    Sample sample;
    sample.track = "cuda2hip";
    sample.origin = "template";
    sample.language = "cuda";
    sample.text = "// uncommitted " + std::to_string(i) + "\n";
    if (!insert_sample_if_absent(*db, sample)) _exit(5);
  }
  char byte = 1;
  if (write(ready, &byte, 1) != 1) _exit(6);
  for (;;) pause();
}

}  // namespace

TEST_CASE("a process killed with SIGKILL inside a transaction leaves a sound database and a leasable job") {
  TempDir dir;
  std::string path = dir.file("crash.db");
  int64_t job_id = 0;
  {
    Result<Database> db = Database::open(path);
    REQUIRE(db.ok());
    JobQueue queue(*db);
    job_id = queue.enqueue({.kind = "verify", .idempotency_key = "verify:crash"})->id;
    Sample committed{.track = "cuda2hip", .origin = "template", .language = "cuda", .text = "// committed\n"};
    REQUIRE(insert_sample_if_absent(*db, committed).ok());
  }

  int pipe_fds[2];
  REQUIRE(pipe(pipe_fds) == 0);
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    close(pipe_fds[0]);
    lease_and_hang(path, pipe_fds[1]);
  }
  close(pipe_fds[1]);
  char byte = 0;
  REQUIRE(read(pipe_fds[0], &byte, 1) == 1);
  close(pipe_fds[0]);
  REQUIRE(kill(child, SIGKILL) == 0);
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGKILL);

  Result<Database> db = Database::open(path);
  REQUIRE(db.ok());
  Result<Statement> integrity = db->prepare("PRAGMA integrity_check");
  REQUIRE(integrity.ok());
  REQUIRE(integrity->step());
  CHECK(integrity->text(0) == "ok");
  Result<Statement> samples = db->prepare("SELECT count(*) FROM sample");
  REQUIRE(samples.ok());
  REQUIRE(samples->step());
  CHECK(samples->int64(0) == 1);  // the committed one only

  JobQueue queue(*db);
  Result<std::optional<Job>> still_leased = queue.find(job_id);
  REQUIRE(still_leased->has_value());
  CHECK((*still_leased)->state == "leased");
  REQUIRE(queue.release_leases(std::string("restarted")).ok());
  Result<std::optional<Job>> again = queue.lease("restarted", 60000);
  REQUIRE(again.ok());
  REQUIRE(again->has_value());
  CHECK((*again)->id == job_id);
  CHECK((*again)->attempts == 1);  // the killed lease was an interruption, not an attempt
}
