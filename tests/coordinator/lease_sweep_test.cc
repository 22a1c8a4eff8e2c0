#include "coordinator/lease_sweep.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/coordinator_managers.h"

namespace ringleader {
namespace {

constexpr absl::Duration kInterval = absl::Milliseconds(200);

class LeaseSweepTest : public testing::CoordinatorManagersTest {
 protected:
  MemberLiveness liveness_{{kLease, absl::Seconds(30), absl::Minutes(5)}};
  std::vector<std::string> gone_;
  LeaseSweep sweep_{workers_,
                    liveness_,
                    &clock_,
                    &clock_,
                    kInterval,
                    [this](const v1::WorkerInfo& w, const std::string& why) {
                      gone_.push_back(w.worker_id() + ": " + why);
                    }};
};

TEST_F(LeaseSweepTest, AWorkerWhoseLeaseRanOutIsGoneAtTheNextSweep) {
  const std::string id = Register().id;
  sweep_.Start();
  clock_.Advance(kLease - kInterval);
  EXPECT_TRUE(gone_.empty());
  clock_.Advance(2 * kInterval);
  EXPECT_EQ(gone_, std::vector<std::string>{id + ": worker " + id +
                                            " on host missed its lease"});
  EXPECT_TRUE(absl::IsNotFound(workers_.Get(id).status()));
  sweep_.Stop();
}

TEST_F(LeaseSweepTest, AMemberTheEvidenceKeepsStaysRegistered) {
  const std::string a = Register().id, b = Register().id;
  // Every member silent at once: the coordinator suspects its own link.
  liveness_.StartGeneration("job", 1, {a, b}, clock_.Now());
  clock_.Advance(2 * kLease);
  sweep_.Sweep();
  EXPECT_TRUE(gone_.empty());
  EXPECT_TRUE(workers_.Get(a).ok());
}

TEST_F(LeaseSweepTest, NothingIsSweptAfterStop) {
  Register();
  sweep_.Start();
  sweep_.Stop();
  clock_.Advance(2 * kLease);
  EXPECT_TRUE(gone_.empty());
  EXPECT_EQ(clock_.pending_timers(), 0u);
}

}  // namespace
}  // namespace ringleader
