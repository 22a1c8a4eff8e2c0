// Issue 18, point 4: (b) The coordinator cut off from every worker for 60 s
// mid-training: the job may finish training meanwhile; its final reports then
// arrive after the heal. What every case checks: partition_case.h.
#include "tests/partition/partition_case.h"

namespace ringleader::testing {
namespace {

TEST_F(PartitionTest, CoordinatorCutOff60sWithMaxJobs1) {
  RunCase(FourHosts::Fault::kCoordinator, absl::Seconds(60),
          /*max_jobs_one=*/true);
}

TEST_F(PartitionTest, CoordinatorCutOff60sServing) {
  RunCase(FourHosts::Fault::kCoordinator, absl::Seconds(60),
          /*max_jobs_one=*/false);
}

}  // namespace
}  // namespace ringleader::testing
