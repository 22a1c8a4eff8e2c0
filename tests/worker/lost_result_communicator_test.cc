// The fault-injection decorator runs the all-reduce for real on every rank
// (the peers complete it with this rank's part in the sum) and tells only
// this rank's caller, only for the operations it selects, that it failed.
#include "worker/comm/lost_result_communicator.h"

#include <memory>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/worker/create_all.h"
#include "tests/worker/memory_kv_client.h"
#include "worker/comm/gloo_communicator.h"

namespace ringleader {
namespace {

TEST(LostResultCommunicatorTest, PeersCompleteTheSumThisRankIsToldItFailed) {
  MemoryKvClient kv;
  GlooCommunicator::Options o;
  o.timeout = absl::Seconds(30);
  std::vector<std::unique_ptr<GlooCommunicator>> comms =
      testing::CreateAll<GlooCommunicator>(&kv, 3, o);
  ASSERT_EQ(comms.size(), 3u);
  int asked = 0;
  // Rank 0 loses its second all-reduce only.
  LostResultCommunicator lossy(comms[0].get(),
                               [&asked] { return ++asked == 2; });
  std::vector<std::vector<float>> data(3);
  std::vector<std::vector<absl::Status>> outcomes(3);
  std::vector<std::thread> threads;
  for (int r = 0; r < 3; ++r) {
    threads.emplace_back([&, r] {
      Communicator& c = r == 0 ? static_cast<Communicator&>(lossy) : *comms[r];
      for (int op = 0; op < 3; ++op) {
        data[r] = {1.0f + r, 10.0f * (r + 1)};
        outcomes[r].push_back(
            c.AllReduceSum(data[r].data(), data[r].size(), DataType::kFloat32));
        // Every rank's buffer holds the sum, the losing rank's too.
        EXPECT_EQ(data[r], (std::vector<float>{6.0f, 60.0f}));
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(asked, 3);
  for (int r = 0; r < 3; ++r) {
    SCOPED_TRACE(r);
    ASSERT_EQ(outcomes[r].size(), 3u);
    for (int op = 0; op < 3; ++op) {
      SCOPED_TRACE(op);
      if (r == 0 && op == 1) {
        EXPECT_EQ(outcomes[r][op].code(), absl::StatusCode::kUnavailable);
        EXPECT_NE(outcomes[r][op].message().find("fault injection"),
                  std::string::npos);
      } else {
        EXPECT_TRUE(outcomes[r][op].ok()) << outcomes[r][op];
      }
    }
  }
}

}  // namespace
}  // namespace ringleader
