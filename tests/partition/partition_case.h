#ifndef RINGLEADER_TESTS_PARTITION_PARTITION_CASE_H_
#define RINGLEADER_TESTS_PARTITION_PARTITION_CASE_H_

// Issue 18, point 4: training goes on through network partitions. Each case
// trains one job (an MLP on a Fashion-MNIST subset) on a coordinator and
// three workers on hosts of their own (four_hosts.h), breaks the network
// with DROP rules once the job trains, heals it after the fault's duration,
// and holds the job to what the issue asks:
//   - it SUCCEEDS, within 1 point of the fault-free run's test accuracy (the
//     same job on the same hosts without a fault, run once per test binary:
//     DDP here is deterministic, so that run is the reference);
//   - with no restart where the data plane was intact (the coordinator cut
//     off, or a worker's traffic to it), at most one where a worker really
//     was cut off;
//   - with --max_jobs=1, every worker exits 0 once the job has succeeded
//     (one that exits before, without having finished its part, fails the
//     case); without it, every worker still serves when the job is done.
// Each case prints what happened (steps trained while the fault lasted,
// frames dropped, what the processes logged, when workers exited); every
// log is in the test's undeclared outputs (outputs.zip), one directory per
// case.

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/partition/four_hosts.h"

namespace ringleader::testing {

class PartitionTest : public ::testing::Test {
 protected:
  // Skips without root, network namespaces, nftables or the dataset.
  void SetUp() override;

  // Breaks the network `fault`-wise for `duration` once the job trains;
  // `max_jobs_one`: the workers run with --max_jobs=1.
  void RunCase(FourHosts::Fault fault, absl::Duration duration,
               bool max_jobs_one);
};

}  // namespace ringleader::testing

#endif  // RINGLEADER_TESTS_PARTITION_PARTITION_CASE_H_
