// Issue 18, point 4: (c) One worker (rank 2) cut off from everyone, peers and
// coordinator, for 10 s mid-training: at most one restart. What every case
// checks: partition_case.h.
#include "tests/partition/partition_case.h"

namespace ringleader::testing {
namespace {

TEST_F(PartitionTest, WorkerCutOff10sWithMaxJobs1) {
  RunCase(FourHosts::Fault::kWorker, absl::Seconds(10), /*max_jobs_one=*/true);
}

TEST_F(PartitionTest, WorkerCutOff10sServing) {
  RunCase(FourHosts::Fault::kWorker, absl::Seconds(10), /*max_jobs_one=*/false);
}

}  // namespace
}  // namespace ringleader::testing
