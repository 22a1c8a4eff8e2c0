// BarrierOutbox against a fake stream that records what the outbox starts:
// releases coalesce while a write is in flight, batches fit the message
// limit, the call finishes only when drained and never with a write in
// flight, the limits end the call with a clear status, and the stream is
// never called with the outbox's lock held.
#include "coordinator/server/barrier_outbox.h"

#include <chrono>
#include <future>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "grpcpp/impl/codegen/proto_utils.h"
#include "gtest/gtest.h"

namespace ringleader {
namespace {

using grpc::StatusCode;

// Records the writes (parsed back) and the Finish; single-threaded tests
// complete writes by calling WriteDone themselves.
class FakeStream final : public BarrierOutbox::Stream {
 public:
  void StartWrite(const grpc::ByteBuffer* bytes) override {
    EXPECT_FALSE(in_flight) << "a second write while one is in flight";
    EXPECT_FALSE(finished) << "a write after Finish";
    in_flight = true;
    grpc::ByteBuffer copy(*bytes);
    v1::BarrierReleases m;
    EXPECT_TRUE(
        grpc::SerializationTraits<v1::BarrierReleases>::Deserialize(&copy, &m)
            .ok());
    sizes.push_back(bytes->Length());
    writes.push_back(m);
  }
  void Finish(grpc::Status s) override {
    EXPECT_FALSE(in_flight) << "Finish while a write is in flight";
    EXPECT_FALSE(finished) << "Finish twice";
    finished = true;
    status = s;
  }

  std::vector<v1::BarrierReleases> writes;
  std::vector<size_t> sizes;
  bool in_flight = false;
  bool finished = false;
  grpc::Status status;
};

v1::BarrierRelease Release(int rank, const std::string& message = "") {
  v1::BarrierRelease r;
  r.set_job_id("job");
  r.set_generation(1);
  r.set_rank(rank);
  r.set_name("round");
  r.set_message(message);
  return r;
}

// Completes the write in flight.
void Complete(FakeStream& s, BarrierOutbox& o, bool ok = true) {
  ASSERT_TRUE(s.in_flight);
  s.in_flight = false;
  o.WriteDone(ok);
}

TEST(BarrierOutboxTest, ReleasesPostedDuringAWriteLeaveTogether) {
  FakeStream s;
  BarrierOutbox o(&s, {});
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(o.ArrivalStarted());
  o.Post(Release(0));  // Nothing in flight: written at once.
  ASSERT_EQ(s.writes.size(), 1u);
  EXPECT_EQ(s.writes[0].releases_size(), 1);
  for (int r = 1; r < 10; ++r) o.Post(Release(r));
  EXPECT_EQ(s.writes.size(), 1u);  // They wait for the write.
  Complete(s, o);
  ASSERT_EQ(s.writes.size(), 2u);
  ASSERT_EQ(s.writes[1].releases_size(), 9);
  for (int r = 1; r < 10; ++r) EXPECT_EQ(s.writes[1].releases(r - 1).rank(), r);
  Complete(s, o);
  EXPECT_EQ(s.writes.size(), 2u);
  EXPECT_FALSE(s.finished);  // The client has not half-closed.
  o.ReadsDone(grpc::Status::OK);
  EXPECT_TRUE(s.finished);
  EXPECT_TRUE(s.status.ok());
}

TEST(BarrierOutboxTest, BatchesStayWithinTheMessageLimit) {
  FakeStream s;
  BarrierOutbox::Limits limits;
  limits.max_message_bytes = 4096;
  BarrierOutbox o(&s, limits);
  constexpr int kReleases = 40;
  for (int i = 0; i < kReleases; ++i) ASSERT_TRUE(o.ArrivalStarted());
  const std::string message(300, 'm');
  for (int r = 0; r < kReleases; ++r) o.Post(Release(r, message));
  int seen = 0;
  for (int i = 0; i < kReleases && s.in_flight; ++i) Complete(s, o);
  for (size_t w = 0; w < s.writes.size(); ++w) {
    EXPECT_LE(s.sizes[w], 4096u) << "write " << w;
    for (const auto& r : s.writes[w].releases()) EXPECT_EQ(r.rank(), seen++);
  }
  EXPECT_EQ(seen, kReleases);
  EXPECT_GT(s.writes.size(), 2u);  // 40 x 330 bytes do not fit in one.
  EXPECT_LT(s.writes.size(), static_cast<size_t>(kReleases));
}

TEST(BarrierOutboxTest, FinishesOnlyOnceEveryArrivalIsAnsweredAndWritten) {
  FakeStream s;
  BarrierOutbox o(&s, {});
  ASSERT_TRUE(o.ArrivalStarted());
  ASSERT_TRUE(o.ArrivalStarted());
  o.ReadsDone(grpc::Status::OK);
  o.Post(Release(0));
  EXPECT_FALSE(s.finished);  // One still waits.
  o.Post(Release(1));        // Queued behind the write in flight.
  EXPECT_FALSE(s.finished);
  Complete(s, o);
  EXPECT_FALSE(s.finished);  // Release 1 is being written.
  Complete(s, o);
  EXPECT_TRUE(s.finished);
  EXPECT_TRUE(s.status.ok());
  EXPECT_EQ(s.writes.size(), 2u);
  EXPECT_FALSE(o.ArrivalStarted());  // Over.
}

TEST(BarrierOutboxTest, TooManyWaitingArrivalsEndTheCall) {
  FakeStream s;
  BarrierOutbox::Limits limits;
  limits.max_outstanding = 3;
  BarrierOutbox o(&s, limits);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(o.ArrivalStarted());
  EXPECT_FALSE(o.ArrivalStarted());
  ASSERT_TRUE(s.finished);
  EXPECT_EQ(s.status.error_code(), StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(s.status.error_message().find("at most 3"), std::string::npos)
      << s.status.error_message();
  o.Post(Release(0));  // Late outcomes are dropped.
  EXPECT_TRUE(s.writes.empty());
}

TEST(BarrierOutboxTest, AFailedWriteEndsTheCallAndDropsTheRest) {
  FakeStream s;
  BarrierOutbox o(&s, {});
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(o.ArrivalStarted());
  o.Post(Release(0));
  o.Post(Release(1));
  Complete(s, o, /*ok=*/false);
  ASSERT_TRUE(s.finished);
  EXPECT_EQ(s.status.error_code(), StatusCode::CANCELLED);
  o.Post(Release(2));
  EXPECT_EQ(s.writes.size(), 1u);
  EXPECT_FALSE(o.ArrivalStarted());
}

TEST(BarrierOutboxTest, ABadMessageEndsTheCallOnceTheWriteInFlightIsDone) {
  FakeStream s;
  BarrierOutbox o(&s, {});
  ASSERT_TRUE(o.ArrivalStarted());
  ASSERT_TRUE(o.ArrivalStarted());
  o.Post(Release(0));
  o.ReadsDone(grpc::Status(StatusCode::INVALID_ARGUMENT, "garbage"));
  EXPECT_FALSE(s.finished);  // Not while the write is in flight.
  Complete(s, o);
  ASSERT_TRUE(s.finished);
  EXPECT_EQ(s.status.error_code(), StatusCode::INVALID_ARGUMENT);
}

TEST(BarrierOutboxTest, NothingIsStartedAfterClose) {
  FakeStream s;
  BarrierOutbox o(&s, {});
  ASSERT_TRUE(o.ArrivalStarted());
  o.Close();
  o.Post(Release(0));
  o.ReadsDone(grpc::Status::OK);
  EXPECT_TRUE(s.writes.empty());
  EXPECT_FALSE(s.finished);
  EXPECT_FALSE(o.ArrivalStarted());
}

// gRPC may run the write's reaction (OnWriteDone, hence WriteDone) on
// another thread before StartWrite returns. Each StartWrite here completes
// its write from a second thread and waits for it, bounded: an outbox that
// called StartWrite under its lock would keep that thread waiting.
class CompletesOnAnotherThread final : public BarrierOutbox::Stream {
 public:
  void StartWrite(const grpc::ByteBuffer*) override {
    ++writes;
    std::future<void> done =
        std::async(std::launch::async, [this] { outbox->WriteDone(true); });
    if (done.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
      called_under_lock = true;
      // Joined when the test ends, once the lock is let go.
      stuck.push_back(std::move(done));
    }
  }
  void Finish(grpc::Status s) override {
    ++finishes;
    status = std::move(s);
  }

  BarrierOutbox* outbox = nullptr;
  int writes = 0;
  int finishes = 0;
  bool called_under_lock = false;
  grpc::Status status;
  std::vector<std::future<void>> stuck;
};

TEST(BarrierOutboxTest, CallsTheStreamOffItsLock) {
  CompletesOnAnotherThread s;
  BarrierOutbox o(&s, {});
  s.outbox = &o;
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(o.ArrivalStarted());
  for (int r = 0; r < 3; ++r) o.Post(Release(r));  // Each written at once.
  EXPECT_EQ(s.writes, 3);
  o.ReadsDone(grpc::Status::OK);
  EXPECT_EQ(s.finishes, 1);
  EXPECT_TRUE(s.status.ok()) << s.status.error_message();
  EXPECT_FALSE(s.called_under_lock);
}

}  // namespace
}  // namespace ringleader
