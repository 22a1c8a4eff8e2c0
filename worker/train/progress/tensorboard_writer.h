#ifndef RINGLEADER_WORKER_TRAIN_PROGRESS_TENSORBOARD_WRITER_H_
#define RINGLEADER_WORKER_TRAIN_PROGRESS_TENSORBOARD_WRITER_H_

// Rank 0's TensorBoard event file (ExportSpec.tensorboard_dir): the scalars
// of each progress report as TensorBoard reads them, without TensorFlow.
//
// The file, events.out.tfevents.<unix secs>.<host> (TensorBoard finds runs
// by the "tfevents" in the name), is a sequence of records (TFRecord):
//   uint64 length, little-endian
//   uint32 masked CRC-32C of those 8 bytes
//   `length` bytes of a serialized tensorflow.Event
//   uint32 masked CRC-32C of the data
// (masking: common/crc32c.h). The first record's Event carries only
// file_version "brain.Event:2"; each later one a Summary of scalars.
//
// The Event and Summary messages are encoded by hand; the few fields used,
// from tensorflow/core/util/event.proto and
// tensorflow/core/framework/summary.proto:
//   Event:          1 wall_time (double, seconds), 2 step (int64),
//                   3 file_version (string), 5 summary (Summary)
//   Summary:        1 value (repeated Summary.Value)
//   Summary.Value:  1 tag (string), 2 simple_value (float)
//
// The writer runs on the progress reporter's thread (it writes each report
// before sending it), never the training thread, and flushes every record so
// TensorBoard sees the points while the job runs. Not thread-safe.

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "ringleader/v1/job.pb.h"
#include "ringleader/v1/worker_service.pb.h"

namespace ringleader {

struct TensorBoardScalar {
  std::string tag;
  float value = 0;
};

// One Event, serialized: `file_version` when not empty, else a Summary of
// `values` (exposed for tests).
std::string EncodeTensorBoardEvent(
    double wall_time, int64_t step, absl::string_view file_version,
    const std::vector<TensorBoardScalar>& values);
// `data` framed as one TFRecord.
std::string TfRecord(absl::string_view data);

class TensorBoardWriter {
 public:
  // Creates `dir` if missing and a new event file in it named for `now`
  // and this host (a suffix .1, .2, ... when that name is taken: a
  // generation that restarted within the second), with its file_version
  // record. `task` names the evaluation metrics (common/eval_metrics.h).
  static absl::StatusOr<std::unique_ptr<TensorBoardWriter>> Open(
      const std::string& dir, const v1::TaskSpec& task, absl::Time now);
  ~TensorBoardWriter();

  // The report's scalars at its step: for a training window, train/loss,
  // train/learning_rate, train/grad_norm (once measured) and
  // train/samples_per_sec; for an evaluation not written yet (a higher
  // eval_epoch) or the final report, eval/<metric> for every metric of the
  // task (rank 0's test shard). Nothing for other reports.
  absl::Status WriteReport(const v1::ReportProgressRequest& report,
                           absl::Time now);
  // WriteReport at the current time; the first error is logged and ends
  // the writing (a full disk must not fail the training), later reports
  // are dropped.
  void Record(const v1::ReportProgressRequest& report);
  // One Event of `values` at `step`, flushed.
  absl::Status Write(int64_t step, absl::Time now,
                     const std::vector<TensorBoardScalar>& values);

  const std::string& path() const { return path_; }

 private:
  TensorBoardWriter(std::FILE* file, std::string path, v1::TaskSpec task)
      : file_(file), path_(std::move(path)), task_(std::move(task)) {}
  absl::Status Append(absl::string_view event);

  std::FILE* const file_;
  const std::string path_;
  const v1::TaskSpec task_;
  int64_t eval_epoch_ = 0;  // The highest evaluation written.
  bool final_written_ = false;
  bool broken_ = false;  // A write failed: Record writes no more.
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_TRAIN_PROGRESS_TENSORBOARD_WRITER_H_
