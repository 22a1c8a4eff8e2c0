// Issue 18, point 4: (d) Only what one worker (rank 2) sends the coordinator is
// dropped, for 12 s mid-training: its heartbeats are lost, its Gloo traffic to
// its peers is not. No restart. What every case checks: partition_case.h.
#include "tests/partition/partition_case.h"

namespace ringleader::testing {
namespace {

TEST_F(PartitionTest, HeartbeatsLost12sWithMaxJobs1) {
  RunCase(FourHosts::Fault::kHeartbeats, absl::Seconds(12),
          /*max_jobs_one=*/true);
}

TEST_F(PartitionTest, HeartbeatsLost12sServing) {
  RunCase(FourHosts::Fault::kHeartbeats, absl::Seconds(12),
          /*max_jobs_one=*/false);
}

}  // namespace
}  // namespace ringleader::testing
