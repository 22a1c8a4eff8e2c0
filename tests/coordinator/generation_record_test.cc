#include "coordinator/generation_record.h"

#include <string>

#include "gtest/gtest.h"
#include "tests/testing/coordinator_managers.h"

namespace ringleader {
namespace {

class GenerationRecordTest : public testing::CoordinatorManagersTest {
 protected:
  Rendezvous::Generation Generation(const std::string& a,
                                    const std::string& b) {
    Rendezvous::Generation gen;
    gen.number = 4;
    gen.members = {{a, "host", "10.0.0.1", 0}, {b, "host", "10.0.0.2", 1}};
    return gen;
  }
};

TEST_F(GenerationRecordTest, ARecordGivesBackTheGenerationAndItsSecrets) {
  const std::string a = Register().id, b = Register().id;
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
  }
  const Rendezvous::Generation back = GenerationOf(record);
  EXPECT_EQ(back.number, 4);
  ASSERT_EQ(back.members.size(), 2u);
  EXPECT_EQ(back.members[0].worker_id, a);
  EXPECT_EQ(back.members[1].worker_id, b);
  EXPECT_EQ(back.members[1].rank, 1);
  EXPECT_EQ(back.members[1].address, "10.0.0.2");
  // A member's record is the registry's, with what the generation says.
  EXPECT_EQ(record.members(0).pid(), workers_.Get(a)->pid());
  EXPECT_EQ(record.members(0).device(), "cpu");
}

TEST_F(GenerationRecordTest, AMemberNoLongerRegisteredHasNoSecret) {
  const std::string a = Register().id, b = Register().id;
  ASSERT_TRUE(workers_.Remove(b).ok());
  const v1::GenerationRecord record =
      GenerationRecordOf("job", Generation(a, b), workers_);
  EXPECT_EQ(record.members(1).worker_id(), b);
  EXPECT_TRUE(record.secrets(1).token_sha256().empty());
}

}  // namespace
}  // namespace ringleader
