#ifndef RINGLEADER_WORKER_JOB_DATA_H_
#define RINGLEADER_WORKER_JOB_DATA_H_

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "ringleader/v1/job.pb.h"
#include "worker/data/dataset.h"

namespace ringleader {

// A job's training and test splits, loaded once per job and kept across its
// generations (a rejoin does not reread the files).
struct JobData {
  std::unique_ptr<Dataset> train;
  std::unique_ptr<Dataset> test;
};

absl::StatusOr<JobData> LoadJobData(const v1::DatasetSpec& spec, uint64_t seed);

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_JOB_DATA_H_
