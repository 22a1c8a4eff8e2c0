// WorkerService.BarrierStream over real gRPC: arrivals written on a stream
// are answered with one BarrierRelease each, with the same outcomes as the
// unary Barrier call; the stream survives a failed arrival, and one stream
// can carry the arrivals of several ranks.
#include <deque>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "ringleader/v1/user_service.grpc.pb.h"
#include "ringleader/v1/worker_service.grpc.pb.h"
#include "tests/testing/form_generation.h"
#include "tests/testing/in_process_coordinator.h"
#include "tests/testing/job_specs.h"

namespace ringleader {
namespace {

using grpc::StatusCode;
using Stream =
    grpc::ClientReaderWriter<v1::BarrierArrivals, v1::BarrierReleases>;

constexpr int kCodeOk = 0;

class BarrierStreamTest : public ::testing::Test {
 protected:
  // A job of `world` ranks, formed: one stub (own connection) per rank.
  void Form(int world) {
    auto c = testing::InProcessCoordinator::Start();
    ASSERT_TRUE(c.ok()) << c.status();
    coordinator_ = *std::move(c);
    v1::JobSpec spec = testing::MinimalJobSpec("barriers", world, world);
    spec.set_rendezvous_last_call_ms(0);
    v1::SubmitJobRequest sub;
    *sub.mutable_spec() = spec;
    v1::SubmitJobResponse sresp;
    ASSERT_TRUE(coordinator_->users()
                    .SubmitJob(testing::ClientContext().get(), sub, &sresp)
                    .ok());
    job_ = sresp.job_id();
    std::vector<std::unique_ptr<v1::WorkerService::Stub>> stubs;
    std::vector<v1::WorkerService::Stub*> raw;
    for (int i = 0; i < world; ++i) {
      stubs.push_back(v1::WorkerService::NewStub(coordinator_->NewChannel()));
      raw.push_back(stubs.back().get());
    }
    testing::FormedGeneration g =
        testing::FormGeneration(raw, job_, "host", 100, 20000);
    ASSERT_FALSE(HasFailure());
    // Index the stubs by rank.
    for (int rank = 0; rank < world; ++rank) {
      stubs_.push_back(std::move(stubs[g.stub_by_rank[rank]]));
    }
    credentials_ = g.credential_by_rank;
    generation_ = g.generation;
  }

  // One BarrierStream, its releases read one by one.
  struct Open {
    std::unique_ptr<grpc::ClientContext> ctx;
    std::unique_ptr<Stream> stream;
    std::deque<v1::BarrierRelease> read;  // Read, not yet taken.

    bool Arrive(std::vector<v1::BarrierRequest> arrivals) {
      v1::BarrierArrivals m;
      for (auto& a : arrivals) *m.add_arrivals() = std::move(a);
      return stream->Write(m);
    }
    bool Arrive(v1::BarrierRequest arrival) {
      return Arrive(std::vector<v1::BarrierRequest>{std::move(arrival)});
    }
    // The next release (a failed read gives code -1).
    v1::BarrierRelease Next() {
      if (read.empty()) {
        v1::BarrierReleases m;
        if (!stream->Read(&m)) {
          v1::BarrierRelease none;
          none.set_code(-1);
          return none;
        }
        EXPECT_GT(m.releases_size(), 0) << "an empty BarrierReleases";
        for (auto& r : *m.mutable_releases()) read.push_back(std::move(r));
        if (read.empty()) return Next();
      }
      v1::BarrierRelease r = std::move(read.front());
      read.pop_front();
      return r;
    }
  };
  // A stream of `rank`'s worker: its credential in the call's metadata.
  Open OpenStream(int rank) {
    Open o;
    o.ctx = testing::ClientContext(credentials_[rank], absl::Seconds(30));
    o.stream = stubs_[rank]->BarrierStream(o.ctx.get());
    return o;
  }

  v1::BarrierRequest Arrival(int rank, const std::string& name,
                             int64_t timeout_ms = 20000) {
    v1::BarrierRequest r;
    r.set_job_id(job_);
    r.set_generation(generation_);
    r.set_rank(rank);
    r.set_name(name);
    r.set_timeout_ms(timeout_ms);
    return r;
  }

  // Rank 0 waits at `name` on `a`, and the test knows the coordinator holds
  // that arrival: a stream's arrivals are handled in order, so once a later
  // barrier on it ("sync", with rank 1 on `b`) is released, it is registered.
  void ArriveAndConfirm(Open& a, Open& b, const std::string& name) {
    ASSERT_TRUE(a.Arrive(Arrival(0, name)));
    ASSERT_TRUE(a.Arrive(Arrival(0, "sync")));
    ASSERT_TRUE(b.Arrive(Arrival(1, "sync")));
    ASSERT_EQ(a.Next().name(), "sync");
    ASSERT_EQ(b.Next().name(), "sync");
  }

  std::unique_ptr<testing::InProcessCoordinator> coordinator_;
  std::vector<std::unique_ptr<v1::WorkerService::Stub>> stubs_;
  std::vector<WorkerCredential> credentials_;  // By rank.
  std::string job_;
  int64_t generation_ = 0;
};

TEST_F(BarrierStreamTest, EveryRankIsReleasedEveryRound) {
  Form(3);
  std::vector<Open> s;
  for (int r = 0; r < 3; ++r) s.push_back(OpenStream(r));
  for (int round = 0; round < 5; ++round) {
    const std::string name = absl::StrCat("round-", round);
    for (int r = 0; r < 3; ++r) {
      ASSERT_TRUE(s[r].Arrive(Arrival(r, name)));
    }
    for (int r = 0; r < 3; ++r) {
      v1::BarrierRelease rel = s[r].Next();
      EXPECT_EQ(rel.code(), kCodeOk) << rel.message();
      EXPECT_EQ(rel.name(), name);
    }
  }
  for (int r = 0; r < 3; ++r) {
    ASSERT_TRUE(s[r].stream->WritesDone());
    grpc::Status st = s[r].stream->Finish();
    EXPECT_TRUE(st.ok()) << st.error_message();
  }
}

TEST_F(BarrierStreamTest, ReleasesComeAsRoundsCompleteNotAsArrivalsWent) {
  Form(2);
  Open a = OpenStream(0), b = OpenStream(1);
  // Rank 0 waits at two barriers on one stream.
  ASSERT_TRUE(a.Arrive(Arrival(0, "first")));
  ASSERT_TRUE(a.Arrive(Arrival(0, "second")));
  // Rank 1 completes "second" before "first".
  ASSERT_TRUE(b.Arrive(Arrival(1, "second")));
  EXPECT_EQ(a.Next().name(), "second");
  EXPECT_EQ(b.Next().name(), "second");
  ASSERT_TRUE(b.Arrive(Arrival(1, "first")));
  EXPECT_EQ(a.Next().name(), "first");
  EXPECT_EQ(b.Next().name(), "first");
}

TEST_F(BarrierStreamTest, ABadArrivalIsAnsweredAndTheStreamGoesOn) {
  Form(2);
  Open a = OpenStream(0), b = OpenStream(1);
  struct Case {
    v1::BarrierRequest req;
    int code;
    std::string in_message;
  };
  std::vector<Case> cases;
  cases.push_back({Arrival(7, "x"),
                   static_cast<int>(StatusCode::INVALID_ARGUMENT), "rank 7"});
  v1::BarrierRequest stale = Arrival(0, "x");
  stale.set_generation(generation_ + 5);
  cases.push_back({stale, -2, ""});  // Any error: checked below.
  v1::BarrierRequest unknown = Arrival(0, "x");
  unknown.set_job_id("no-such-job");
  cases.push_back({unknown, static_cast<int>(StatusCode::NOT_FOUND), ""});
  cases.push_back(
      {Arrival(0, ""), static_cast<int>(StatusCode::INVALID_ARGUMENT), "name"});
  for (const Case& c : cases) {
    ASSERT_TRUE(a.Arrive(c.req));
    v1::BarrierRelease rel = a.Next();
    if (c.code == -2) {
      EXPECT_GT(rel.code(), 0) << c.req.ShortDebugString();
    } else {
      EXPECT_EQ(rel.code(), c.code)
          << c.req.ShortDebugString() << ": " << rel.message();
    }
    EXPECT_NE(rel.message().find(c.in_message), std::string::npos)
        << rel.message();
    EXPECT_FALSE(rel.message().empty());
  }
  // A rank waiting twice at one barrier.
  ASSERT_TRUE(a.Arrive(Arrival(0, "twice")));
  ASSERT_TRUE(a.Arrive(Arrival(0, "twice")));
  v1::BarrierRelease dup = a.Next();
  EXPECT_EQ(dup.code(), static_cast<int>(StatusCode::ALREADY_EXISTS))
      << dup.message();
  // The stream still works: the first "twice" arrival completes.
  ASSERT_TRUE(b.Arrive(Arrival(1, "twice")));
  EXPECT_EQ(a.Next().code(), kCodeOk);
  EXPECT_EQ(b.Next().code(), kCodeOk);
}

TEST_F(BarrierStreamTest, ATimedOutArrivalIsReleasedWithDeadlineExceeded) {
  Form(3);
  Open a = OpenStream(0);
  ASSERT_TRUE(a.Arrive(Arrival(0, "alone", /*timeout_ms=*/50)));
  v1::BarrierRelease rel = a.Next();
  EXPECT_EQ(rel.code(), static_cast<int>(StatusCode::DEADLINE_EXCEEDED));
  EXPECT_NE(rel.message().find("1 of 3"), std::string::npos) << rel.message();
}

TEST_F(BarrierStreamTest, AHalfClosedStreamEndsOkOnceItsArrivalsAreAnswered) {
  Form(2);
  Open a = OpenStream(0), b = OpenStream(1);
  ASSERT_TRUE(a.Arrive(Arrival(0, "late")));
  ASSERT_TRUE(a.stream->WritesDone());
  ASSERT_TRUE(b.Arrive(Arrival(1, "late")));
  EXPECT_EQ(a.Next().code(), kCodeOk);
  EXPECT_EQ(a.Next().code(), -1);  // Nothing more.
  grpc::Status st = a.stream->Finish();
  EXPECT_TRUE(st.ok()) << st.error_message();
}

TEST_F(BarrierStreamTest, AnEndedJobAbortsPendingArrivals) {
  Form(2);
  Open a = OpenStream(0), b = OpenStream(1);
  ASSERT_NO_FATAL_FAILURE(ArriveAndConfirm(a, b, "never"));
  v1::CancelJobRequest cancel;
  cancel.set_job_id(job_);
  v1::Job j;
  ASSERT_TRUE(coordinator_->users()
                  .CancelJob(testing::ClientContext().get(), cancel, &j)
                  .ok());
  v1::BarrierRelease rel = a.Next();
  EXPECT_EQ(rel.name(), "never");
  EXPECT_EQ(rel.code(), static_cast<int>(StatusCode::ABORTED)) << rel.message();
}

TEST_F(BarrierStreamTest, AClientThatGoesAwayLeavesTheServerServing) {
  Form(2);
  Open b = OpenStream(1);
  {
    Open a = OpenStream(0);
    ASSERT_NO_FATAL_FAILURE(ArriveAndConfirm(a, b, "gone"));
    a.ctx->TryCancel();
    EXPECT_EQ(a.stream->Finish().error_code(), StatusCode::CANCELLED);
  }
  // Rank 0's arrival left with its stream (as a cancelled Barrier call's
  // does): nothing waits at the barrier, and rank 1 alone does not pass it.
  ASSERT_TRUE(
      coordinator_->server().coordinator().barriers().AwaitArrivalsBetween(
          0, 0, absl::Seconds(30)));
  ASSERT_TRUE(b.Arrive(Arrival(1, "gone")));
  // A new stream for rank 0 arrives again (not "already waits") and the
  // round completes for both.
  Open a2 = OpenStream(0);
  ASSERT_TRUE(a2.Arrive(Arrival(0, "gone")));
  v1::BarrierRelease gone = b.Next();
  EXPECT_EQ(gone.name(), "gone");
  EXPECT_EQ(gone.code(), kCodeOk) << gone.message();
  EXPECT_EQ(a2.Next().code(), kCodeOk);
}

// A process serving several ranks (a host agent) sends them all on one
// stream: each arrival is released once, naming its rank. (That releases
// share messages is BarrierOutbox's, tested in barrier_outbox_test.)
TEST_F(BarrierStreamTest, OneStreamCarriesEveryRankOfTheRound) {
  constexpr int kWorld = 8;
  Form(kWorld);
  Open s = OpenStream(0);
  // A host agent's stream: it hands every rank's credential in-band first.
  v1::BarrierArrivals credentials;
  for (const WorkerCredential& c : credentials_) {
    v1::WorkerCredential* out = credentials.add_credentials();
    out->set_worker_id(c.worker_id);
    out->set_worker_token(c.token);
  }
  ASSERT_TRUE(s.stream->Write(credentials));
  for (int round = 0; round < 3; ++round) {
    const std::string name = absl::StrCat("all-", round);
    std::vector<v1::BarrierRequest> arrivals;
    for (int r = 0; r < kWorld; ++r) arrivals.push_back(Arrival(r, name));
    ASSERT_TRUE(s.Arrive(std::move(arrivals)));
    std::set<int> released;
    for (int i = 0; i < kWorld; ++i) {
      v1::BarrierRelease rel = s.Next();
      ASSERT_EQ(rel.code(), kCodeOk) << rel.message();
      EXPECT_EQ(rel.name(), name);
      EXPECT_EQ(rel.job_id(), job_);
      EXPECT_EQ(rel.generation(), generation_);
      EXPECT_TRUE(released.insert(rel.rank()).second)
          << "twice: " << rel.rank();
    }
    EXPECT_EQ(released.size(), kWorld);
  }
  ASSERT_TRUE(s.stream->WritesDone());
  EXPECT_EQ(s.Next().code(), -1);  // Nothing more: each came once.
  grpc::Status st = s.stream->Finish();
  EXPECT_TRUE(st.ok()) << st.error_message();
}

// The arrivals of one message are answered each on their own: a bad one
// fails alone, the good one waits for its round, an empty message is no
// arrival.
TEST_F(BarrierStreamTest, ArrivalsOfOneMessageAreAnsweredEachOnTheirOwn) {
  Form(2);
  Open a = OpenStream(0), b = OpenStream(1);
  ASSERT_TRUE(a.Arrive(std::vector<v1::BarrierRequest>{}));
  ASSERT_TRUE(a.Arrive({Arrival(7, "mixed"), Arrival(0, "mixed")}));
  v1::BarrierRelease bad = a.Next();
  EXPECT_EQ(bad.rank(), 7);
  EXPECT_EQ(bad.code(), static_cast<int>(StatusCode::INVALID_ARGUMENT))
      << bad.message();
  ASSERT_TRUE(b.Arrive(Arrival(1, "mixed")));
  v1::BarrierRelease good = a.Next();
  EXPECT_EQ(good.rank(), 0);
  EXPECT_EQ(good.code(), kCodeOk) << good.message();
  EXPECT_EQ(b.Next().code(), kCodeOk);
  ASSERT_TRUE(a.stream->WritesDone());
  EXPECT_EQ(a.Next().code(), -1);
  EXPECT_TRUE(a.stream->Finish().ok());
}

TEST_F(BarrierStreamTest, TooManyArrivalsInOneMessageEndTheCall) {
  Form(2);
  Open a = OpenStream(0);
  ASSERT_TRUE(a.Arrive(std::vector<v1::BarrierRequest>(4097, Arrival(0, "x"))));
  EXPECT_EQ(a.Next().code(), -1);  // No release: the call ended.
  grpc::Status st = a.stream->Finish();
  EXPECT_EQ(st.error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(st.error_message().find("4097 arrivals"), std::string::npos)
      << st.error_message();
}

// A client that keeps arriving at new barriers without their rounds ever
// completing is stopped at 65536 waiting arrivals, not followed without
// bound.
TEST_F(BarrierStreamTest, TooManyWaitingArrivalsEndTheCall) {
  Form(2);
  Open a = OpenStream(0);
  constexpr int kLimit = 1 << 16;  // BarrierOutbox::Limits' default.
  for (int sent = 0; sent <= kLimit;) {
    std::vector<v1::BarrierRequest> batch;
    for (int i = 0; i < 4096 && sent <= kLimit; ++i, ++sent) {
      batch.push_back(Arrival(0, absl::StrCat("n", sent)));
    }
    if (!a.Arrive(std::move(batch))) break;  // The call already ended.
  }
  EXPECT_EQ(a.Next().code(), -1);  // Nothing is released: the call ended.
  grpc::Status st = a.stream->Finish();
  EXPECT_EQ(st.error_code(), StatusCode::RESOURCE_EXHAUSTED)
      << st.error_message();
  EXPECT_NE(st.error_message().find("at most 65536"), std::string::npos)
      << st.error_message();
}

// Bytes that are no BarrierArrivals end the call with INVALID_ARGUMENT.
class RawStream final
    : public grpc::ClientBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  RawStream(grpc::GenericStub* stub, const std::string& bytes) {
    ctx_.set_deadline(std::chrono::system_clock::now() +
                      std::chrono::seconds(30));
    grpc::Slice slice(bytes);
    request_ = grpc::ByteBuffer(&slice, 1);
    stub->PrepareBidiStreamingCall(&ctx_,
                                   "/ringleader.v1.WorkerService/BarrierStream",
                                   grpc::StubOptions(), this);
    StartWrite(&request_);
    StartRead(&response_);
    StartCall();
  }
  void OnWriteDone(bool) override {}
  void OnReadDone(bool) override {}
  void OnDone(const grpc::Status& s) override {
    absl::MutexLock lock(&mu_);
    status_ = s;
    done_ = true;
  }
  grpc::Status Wait() {
    absl::MutexLock lock(&mu_);
    mu_.AwaitWithTimeout(absl::Condition(&done_), absl::Seconds(30));
    return done_ ? status_ : grpc::Status(StatusCode::UNKNOWN, "no end");
  }

 private:
  grpc::ClientContext ctx_;
  grpc::ByteBuffer request_, response_;
  absl::Mutex mu_;
  bool done_ ABSL_GUARDED_BY(mu_) = false;
  grpc::Status status_ ABSL_GUARDED_BY(mu_);
};

TEST_F(BarrierStreamTest, GarbageOnTheStreamIsInvalidArgument) {
  Form(2);
  grpc::GenericStub generic(coordinator_->channel());
  for (const std::string& garbage :
       {std::string("\xff\xff\xff\xff"), std::string("\x0f garbage", 9)}) {
    RawStream raw(&generic, garbage);
    grpc::Status st = raw.Wait();
    EXPECT_EQ(st.error_code(), StatusCode::INVALID_ARGUMENT)
        << st.error_message();
    EXPECT_NE(st.error_message().find("does not parse"), std::string::npos)
        << st.error_message();
  }
  // Still serving.
  Open a = OpenStream(0), b = OpenStream(1);
  ASSERT_TRUE(a.Arrive(Arrival(0, "after")));
  ASSERT_TRUE(b.Arrive(Arrival(1, "after")));
  EXPECT_EQ(a.Next().code(), kCodeOk);
  EXPECT_EQ(b.Next().code(), kCodeOk);
}

}  // namespace
}  // namespace ringleader
