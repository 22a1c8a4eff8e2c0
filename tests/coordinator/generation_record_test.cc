#include "coordinator/generation_record.h"

#include <string>

#include "common/fake_clock.h"
#include "gtest/gtest.h"

namespace ringleader {
namespace {

class GenerationRecordTest : public ::testing::Test {
 protected:
  std::string Register(int pid) {
    v1::RegisterRequest r;
    r.set_hostname("host");
    r.set_pid(pid);
    r.set_device("cpu");
    r.set_address("10.0.0." + std::to_string(pid));
    return workers_.Register(r, "worker-cert")->response.worker_id();
  }

  Rendezvous::Generation Generation(const std::string& a,
                                    const std::string& b) {
    Rendezvous::Generation gen;
    gen.number = 4;
    gen.members = {{a, "host", "10.0.0.1", 0}, {b, "host", "10.0.0.2", 1}};
    return gen;
  }

  FakeClock clock_;
  WorkerRegistry workers_{&clock_, {}};
};

TEST_F(GenerationRecordTest, ARecordGivesBackTheGenerationAndItsSecrets) {
  const std::string a = Register(1), b = Register(2);
  ASSERT_TRUE(workers_.SetJob(a, "job").ok());
  const v1::GenerationRecord record =
      GenerationRecordOf("job", Generation(a, b), workers_);
  EXPECT_EQ(record.job_id(), "job");
  EXPECT_EQ(record.number(), 4);
  ASSERT_EQ(record.members_size(), 2);
  ASSERT_EQ(record.secrets_size(), 2);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(record.members(i).job_id(), "job");
    EXPECT_FALSE(record.secrets(i).token_sha256().empty());
    EXPECT_EQ(record.secrets(i).peer_identity(), "worker-cert");
  }
  const Rendezvous::Generation back = GenerationOf(record);
  EXPECT_EQ(back.number, 4);
  ASSERT_EQ(back.members.size(), 2u);
  EXPECT_EQ(back.members[0].worker_id, a);
  EXPECT_EQ(back.members[1].worker_id, b);
  EXPECT_EQ(back.members[1].rank, 1);
  EXPECT_EQ(back.members[1].address, "10.0.0.2");
}

TEST_F(GenerationRecordTest, AMemberNoLongerRegisteredHasNoSecret) {
  const std::string a = Register(1), b = Register(2);
  ASSERT_TRUE(workers_.Remove(b).ok());
  const v1::GenerationRecord record =
      GenerationRecordOf("job", Generation(a, b), workers_);
  EXPECT_EQ(record.members(1).worker_id(), b);
  EXPECT_TRUE(record.secrets(1).token_sha256().empty());
}

}  // namespace
}  // namespace ringleader
