// Issue 18, point 4: (a) The coordinator cut off from every worker for 10 s
// mid-training (the workers and their Gloo ring untouched). What every case
// checks: partition_case.h.
#include "tests/partition/partition_case.h"

namespace ringleader::testing {
namespace {

TEST_F(PartitionTest, CoordinatorCutOff10sWithMaxJobs1) {
  RunCase(FourHosts::Fault::kCoordinator, absl::Seconds(10),
          /*max_jobs_one=*/true);
}

TEST_F(PartitionTest, CoordinatorCutOff10sServing) {
  RunCase(FourHosts::Fault::kCoordinator, absl::Seconds(10),
          /*max_jobs_one=*/false);
}

}  // namespace
}  // namespace ringleader::testing
