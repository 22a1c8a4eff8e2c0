#include "coordinator/state_store.h"

#include <sqlite3.h>

#include <utility>

#include "absl/strings/str_cat.h"

namespace ringleader {
namespace {

// Finalizes a prepared statement on every path.
struct Statement {
  sqlite3_stmt* stmt = nullptr;
  ~Statement() { sqlite3_finalize(stmt); }
};

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS jobs (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  job_id TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  state INTEGER NOT NULL,
  job BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS checkpoints (
  checkpoint_id INTEGER PRIMARY KEY AUTOINCREMENT,
  job_id TEXT NOT NULL,
  job_name TEXT NOT NULL,
  record BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS checkpoints_by_name ON checkpoints(job_name);
CREATE TABLE IF NOT EXISTS generations (
  job_id TEXT PRIMARY KEY,
  number INTEGER NOT NULL,
  record BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS bad_checkpoints (
  checkpoint_id INTEGER PRIMARY KEY,
  reason TEXT NOT NULL
);
-- Added with DeleteJob; a database from before it gets it empty, which is
-- right: nothing was ever deleted from it.
CREATE TABLE IF NOT EXISTS counters (
  name TEXT PRIMARY KEY,
  value INTEGER NOT NULL
);
-- A job's training history (coordinator/job_history.h), one row per job:
-- its bounded series as one HistorySeries blob. A database from before it
-- gets it empty.
CREATE TABLE IF NOT EXISTS job_history (
  job_id TEXT PRIMARY KEY,
  series BLOB NOT NULL
);
)sql";

}  // namespace

absl::StatusOr<std::unique_ptr<StateStore>> StateStore::Open(
    const std::string& path) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(
      path.c_str(), &db,
      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
      nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close(db);
    return absl::UnavailableError(
        absl::StrCat("cannot open state file ", path, ": ", msg));
  }
  std::unique_ptr<StateStore> store(new StateStore(db));
  absl::MutexLock lock(&store->mu_);
  sqlite3_busy_timeout(db, 5000);
  if (path != ":memory:") {
    if (absl::Status s = store->Exec("PRAGMA journal_mode=WAL;"); !s.ok()) {
      return absl::DataLossError(
          absl::StrCat("state file ", path,
                       " is not a Ringleader state database: ", s.message()));
    }
  }
  if (absl::Status s = store->Exec(kSchema); !s.ok()) {
    return absl::DataLossError(
        absl::StrCat("state file ", path,
                     " is not a Ringleader state database: ", s.message()));
  }
  return store;
}

StateStore::~StateStore() {
  absl::MutexLock lock(&mu_);
  sqlite3_close(db_);
}

absl::Status StateStore::Exec(const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    return absl::InternalError(msg);
  }
  return absl::OkStatus();
}

absl::Status StateStore::Error(const char* what) const {
  return absl::InternalError(
      absl::StrCat("state store: ", what, ": ", sqlite3_errmsg(db_)));
}

absl::Status StateStore::SaveJob(const v1::Job& job) {
  std::string blob;
  if (!job.SerializeToString(&blob)) {
    return absl::InternalError("state store: cannot serialize job");
  }
  absl::MutexLock lock(&mu_);
  Statement st;
  if (sqlite3_prepare_v2(db_,
                         "INSERT INTO jobs(job_id, name, state, job) "
                         "VALUES(?1, ?2, ?3, ?4) ON CONFLICT(job_id) DO UPDATE "
                         "SET state=excluded.state, job=excluded.job",
                         -1, &st.stmt, nullptr) != SQLITE_OK) {
    return Error("prepare save job");
  }
  sqlite3_bind_text(st.stmt, 1, job.job_id().c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st.stmt, 2, job.spec().name().c_str(), -1,
                    SQLITE_TRANSIENT);
  sqlite3_bind_int(st.stmt, 3, job.state());
  sqlite3_bind_blob(st.stmt, 4, blob.data(), static_cast<int>(blob.size()),
                    SQLITE_TRANSIENT);
  if (sqlite3_step(st.stmt) != SQLITE_DONE) return Error("save job");
  return absl::OkStatus();
}

absl::Status StateStore::DeleteJob(const std::string& job_id) {
  absl::MutexLock lock(&mu_);
  // One transaction: a crash leaves the job either whole or gone, and
  // counted as deleted exactly when it is.
  if (absl::Status s = Exec("BEGIN IMMEDIATE;"); !s.ok()) return s;
  absl::Status s = DeleteJobRowsLocked(job_id);
  if (!s.ok()) {
    Exec("ROLLBACK;").IgnoreError();
    return s;
  }
  return Exec("COMMIT;");
}

absl::Status StateStore::DeleteJobRowsLocked(const std::string& job_id) {
  // The count of deleted jobs keeps NextJobSequence from handing out a
  // deleted job's number again.
  constexpr const char* kSteps[] = {
      "DELETE FROM jobs WHERE job_id = ?1",
      "INSERT INTO counters(name, value) SELECT 'deleted_jobs', changes() "
      "WHERE changes() > 0 ON CONFLICT(name) DO UPDATE SET value = value + 1",
      "DELETE FROM generations WHERE job_id = ?1",
      "DELETE FROM job_history WHERE job_id = ?1"};
  for (const char* sql : kSteps) {
    Statement st;
    if (sqlite3_prepare_v2(db_, sql, -1, &st.stmt, nullptr) != SQLITE_OK) {
      return Error("prepare delete job");
    }
    if (sqlite3_bind_parameter_count(st.stmt) > 0) {
      sqlite3_bind_text(st.stmt, 1, job_id.c_str(), -1, SQLITE_TRANSIENT);
    }
    if (sqlite3_step(st.stmt) != SQLITE_DONE) return Error("delete job");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<v1::Job>> StateStore::LoadJobs() const {
  absl::MutexLock lock(&mu_);
  Statement st;
  if (sqlite3_prepare_v2(db_, "SELECT job_id, job FROM jobs ORDER BY seq", -1,
                         &st.stmt, nullptr) != SQLITE_OK) {
    return Error("prepare load jobs");
  }
  std::vector<v1::Job> jobs;
  int rc;
  while ((rc = sqlite3_step(st.stmt)) == SQLITE_ROW) {
    const char* id =
        reinterpret_cast<const char*>(sqlite3_column_text(st.stmt, 0));
    const void* data = sqlite3_column_blob(st.stmt, 1);
    int size = sqlite3_column_bytes(st.stmt, 1);
    v1::Job job;
    if (!job.ParseFromArray(data, size) || job.job_id() != id) {
      return absl::DataLossError(
          absl::StrCat("state store: job ", id, " is corrupt"));
    }
    jobs.push_back(std::move(job));
  }
  if (rc != SQLITE_DONE) return Error("load jobs");
  return jobs;
}

absl::Status StateStore::SaveGeneration(const v1::GenerationRecord& g) {
  std::string blob;
  if (!g.SerializeToString(&blob)) {
    return absl::InternalError("state store: cannot serialize generation");
  }
  absl::MutexLock lock(&mu_);
  Statement st;
  if (sqlite3_prepare_v2(db_,
                         // The coordinator saves outside its lock, so an
                         // older generation's save can come after a newer
                         // one's: it must not replace it.
                         "INSERT INTO generations(job_id, number, record) "
                         "VALUES(?1, ?2, ?3) ON CONFLICT(job_id) DO UPDATE "
                         "SET number = excluded.number, record = "
                         "excluded.record WHERE excluded.number >= "
                         "generations.number",
                         -1, &st.stmt, nullptr) != SQLITE_OK) {
    return Error("prepare save generation");
  }
  sqlite3_bind_text(st.stmt, 1, g.job_id().c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(st.stmt, 2, g.number());
  sqlite3_bind_blob(st.stmt, 3, blob.data(), static_cast<int>(blob.size()),
                    SQLITE_TRANSIENT);
  if (sqlite3_step(st.stmt) != SQLITE_DONE) return Error("save generation");
  return absl::OkStatus();
}

absl::Status StateStore::DeleteGeneration(const std::string& job_id,
                                          int64_t number) {
  absl::MutexLock lock(&mu_);
  Statement st;
  if (sqlite3_prepare_v2(
          db_,
          "DELETE FROM generations WHERE job_id = ?1 AND (?2 < 0 OR number = "
          "?2)",
          -1, &st.stmt, nullptr) != SQLITE_OK) {
    return Error("prepare delete generation");
  }
  sqlite3_bind_text(st.stmt, 1, job_id.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(st.stmt, 2, number);
  if (sqlite3_step(st.stmt) != SQLITE_DONE) return Error("delete generation");
  return absl::OkStatus();
}

absl::StatusOr<std::vector<v1::GenerationRecord>> StateStore::LoadGenerations()
    const {
  absl::MutexLock lock(&mu_);
  Statement st;
  if (sqlite3_prepare_v2(db_,
                         "SELECT job_id, number, record FROM generations "
                         "ORDER BY job_id",
                         -1, &st.stmt, nullptr) != SQLITE_OK) {
    return Error("prepare load generations");
  }
  std::vector<v1::GenerationRecord> out;
  int rc;
  while ((rc = sqlite3_step(st.stmt)) == SQLITE_ROW) {
    const char* id =
        reinterpret_cast<const char*>(sqlite3_column_text(st.stmt, 0));
    v1::GenerationRecord g;
    if (!g.ParseFromArray(sqlite3_column_blob(st.stmt, 2),
                          sqlite3_column_bytes(st.stmt, 2)) ||
        g.job_id() != id || g.number() != sqlite3_column_int64(st.stmt, 1)) {
      return absl::DataLossError(
          absl::StrCat("state store: generation of job ", id, " is corrupt"));
    }
    out.push_back(std::move(g));
  }
  if (rc != SQLITE_DONE) return Error("load generations");
  return out;
}

absl::StatusOr<int64_t> StateStore::AddCheckpoint(
    const std::string& job_id, const std::string& job_name,
    const v1::CheckpointRecord& record) {
  std::string blob;
  if (!record.SerializeToString(&blob)) {
    return absl::InternalError("state store: cannot serialize checkpoint");
  }
  absl::MutexLock lock(&mu_);
  Statement st;
  if (sqlite3_prepare_v2(db_,
                         "INSERT INTO checkpoints(job_id, job_name, record) "
                         "VALUES(?1, ?2, ?3)",
                         -1, &st.stmt, nullptr) != SQLITE_OK) {
    return Error("prepare add checkpoint");
  }
  sqlite3_bind_text(st.stmt, 1, job_id.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st.stmt, 2, job_name.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_blob(st.stmt, 3, blob.data(), static_cast<int>(blob.size()),
                    SQLITE_TRANSIENT);
  if (sqlite3_step(st.stmt) != SQLITE_DONE) return Error("add checkpoint");
  return sqlite3_last_insert_rowid(db_);
}

absl::StatusOr<std::optional<v1::CheckpointRecord>>
StateStore::LatestCheckpoint(const std::string& job_name) const {
  absl::MutexLock lock(&mu_);
  Statement st;
  if (sqlite3_prepare_v2(db_,
                         "SELECT checkpoint_id, record FROM checkpoints WHERE "
                         "job_name = ?1 AND checkpoint_id NOT IN (SELECT "
                         "checkpoint_id FROM bad_checkpoints) ORDER BY "
                         "checkpoint_id DESC LIMIT 1",
                         -1, &st.stmt, nullptr) != SQLITE_OK) {
    return Error("prepare latest checkpoint");
  }
  sqlite3_bind_text(st.stmt, 1, job_name.c_str(), -1, SQLITE_TRANSIENT);
  int rc = sqlite3_step(st.stmt);
  if (rc == SQLITE_DONE) return std::optional<v1::CheckpointRecord>();
  if (rc != SQLITE_ROW) return Error("latest checkpoint");
  v1::CheckpointRecord record;
  if (!record.ParseFromArray(sqlite3_column_blob(st.stmt, 1),
                             sqlite3_column_bytes(st.stmt, 1))) {
    return absl::DataLossError(absl::StrCat("state store: checkpoint ",
                                            sqlite3_column_int64(st.stmt, 0),
                                            " of ", job_name, " is corrupt"));
  }
  record.set_checkpoint_id(sqlite3_column_int64(st.stmt, 0));
  return std::optional<v1::CheckpointRecord>(record);
}

absl::StatusOr<std::vector<v1::CheckpointRecord>> StateStore::RecentCheckpoints(
    const std::string& job_id, const std::string& job_name, int64_t max_id,
    int limit) const {
  absl::MutexLock lock(&mu_);
  Statement st;
  if (sqlite3_prepare_v2(
          db_,
          "SELECT checkpoint_id, record FROM checkpoints WHERE "
          "checkpoint_id <= ?1 AND (job_id = ?2 OR job_name = ?3) AND "
          "checkpoint_id NOT IN (SELECT checkpoint_id FROM bad_checkpoints) "
          "ORDER BY checkpoint_id DESC LIMIT ?4",
          -1, &st.stmt, nullptr) != SQLITE_OK) {
    return Error("prepare recent checkpoints");
  }
  sqlite3_bind_int64(st.stmt, 1, max_id);
  sqlite3_bind_text(st.stmt, 2, job_id.c_str(), -1, SQLITE_TRANSIENT);
  if (job_name.empty()) {
    sqlite3_bind_null(st.stmt, 3);  // job_name = NULL matches no row.
  } else {
    sqlite3_bind_text(st.stmt, 3, job_name.c_str(), -1, SQLITE_TRANSIENT);
  }
  sqlite3_bind_int(st.stmt, 4, limit);
  std::vector<v1::CheckpointRecord> out;
  int rc;
  while ((rc = sqlite3_step(st.stmt)) == SQLITE_ROW) {
    v1::CheckpointRecord& record = out.emplace_back();
    if (!record.ParseFromArray(sqlite3_column_blob(st.stmt, 1),
                               sqlite3_column_bytes(st.stmt, 1))) {
      return absl::DataLossError(absl::StrCat(
          "state store: checkpoint ", sqlite3_column_int64(st.stmt, 0),
          " of job ", job_id, " is corrupt"));
    }
    record.set_checkpoint_id(sqlite3_column_int64(st.stmt, 0));
  }
  if (rc != SQLITE_DONE) return Error("recent checkpoints");
  return out;
}

absl::Status StateStore::MarkCheckpointBad(int64_t checkpoint_id,
                                           const std::string& reason) {
  absl::MutexLock lock(&mu_);
  Statement st;
  if (sqlite3_prepare_v2(
          db_,
          "INSERT OR REPLACE INTO bad_checkpoints(checkpoint_id, "
          "reason) VALUES(?1, ?2)",
          -1, &st.stmt, nullptr) != SQLITE_OK) {
    return Error("prepare mark checkpoint bad");
  }
  sqlite3_bind_int64(st.stmt, 1, checkpoint_id);
  sqlite3_bind_text(st.stmt, 2, reason.c_str(), -1, SQLITE_TRANSIENT);
  if (sqlite3_step(st.stmt) != SQLITE_DONE) return Error("mark checkpoint bad");
  return absl::OkStatus();
}

absl::StatusOr<int64_t> StateStore::NextJobSequence() const {
  absl::MutexLock lock(&mu_);
  Statement st;
  // Jobs stored now plus jobs deleted: COUNT(*) alone would hand out the
  // number of a deleted job again. (Not sqlite_sequence: SaveJob's upserts
  // advance it too.)
  if (sqlite3_prepare_v2(
          db_,
          "SELECT (SELECT COUNT(*) FROM jobs) + COALESCE((SELECT "
          "value FROM counters WHERE name = 'deleted_jobs'), "
          "0) + 1",
          -1, &st.stmt, nullptr) != SQLITE_OK ||
      sqlite3_step(st.stmt) != SQLITE_ROW) {
    return Error("next job sequence");
  }
  return sqlite3_column_int64(st.stmt, 0);
}

absl::Status StateStore::SaveHistory(const v1::HistorySeries& series) {
  std::string blob;
  if (!series.SerializeToString(&blob)) {
    return absl::InternalError("state store: cannot serialize history");
  }
  absl::MutexLock lock(&mu_);
  Statement st;
  // Only for a job on record: a save that races the job's deletion must
  // not leave a row behind that nothing deletes.
  if (sqlite3_prepare_v2(db_,
                         "INSERT INTO job_history(job_id, series) "
                         "SELECT ?1, ?2 WHERE EXISTS (SELECT 1 FROM jobs "
                         "WHERE job_id = ?1) ON CONFLICT(job_id) DO UPDATE "
                         "SET series = excluded.series",
                         -1, &st.stmt, nullptr) != SQLITE_OK) {
    return Error("prepare save history");
  }
  sqlite3_bind_text(st.stmt, 1, series.job_id().c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_blob(st.stmt, 2, blob.data(), static_cast<int>(blob.size()),
                    SQLITE_TRANSIENT);
  if (sqlite3_step(st.stmt) != SQLITE_DONE) return Error("save history");
  return absl::OkStatus();
}

absl::StatusOr<std::vector<v1::HistorySeries>> StateStore::LoadHistories()
    const {
  absl::MutexLock lock(&mu_);
  Statement st;
  if (sqlite3_prepare_v2(db_,
                         "SELECT job_id, series FROM job_history ORDER BY "
                         "job_id",
                         -1, &st.stmt, nullptr) != SQLITE_OK) {
    return Error("prepare load histories");
  }
  std::vector<v1::HistorySeries> out;
  int rc;
  while ((rc = sqlite3_step(st.stmt)) == SQLITE_ROW) {
    const char* id =
        reinterpret_cast<const char*>(sqlite3_column_text(st.stmt, 0));
    v1::HistorySeries series;
    if (!series.ParseFromArray(sqlite3_column_blob(st.stmt, 1),
                               sqlite3_column_bytes(st.stmt, 1)) ||
        series.job_id() != id) {
      return absl::DataLossError(
          absl::StrCat("state store: the history of job ", id, " is corrupt"));
    }
    out.push_back(std::move(series));
  }
  if (rc != SQLITE_DONE) return Error("load histories");
  return out;
}

}  // namespace ringleader
