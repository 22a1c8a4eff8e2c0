#include "bench/control_plane/control_plane_clients.h"

#include <atomic>
#include <condition_variable>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <queue>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/blocking_counter.h"
#include "absl/synchronization/mutex.h"
#include "common/worker_credential.h"
#include "ringleader/v1/worker_service.grpc.pb.h"

namespace ringleader::bench {
namespace {

// Runs closures at given times on one thread (heartbeats, retries).
class Scheduler {
 public:
  Scheduler() : thread_([this] { Loop(); }) {}
  ~Scheduler() {
    {
      std::lock_guard<std::mutex> l(mu_);
      stop_ = true;
    }
    cv_.notify_one();
    thread_.join();
  }
  void At(int64_t when_us, std::function<void()> fn) {
    {
      std::lock_guard<std::mutex> l(mu_);
      q_.push(Item{when_us, seq_++, std::move(fn)});
    }
    cv_.notify_one();
  }

 private:
  struct Item {
    int64_t when;
    uint64_t seq;
    std::function<void()> fn;
    bool operator<(const Item& o) const {
      return when != o.when ? when > o.when : seq > o.seq;
    }
  };
  void Loop() {
    std::unique_lock<std::mutex> l(mu_);
    while (!stop_) {
      if (q_.empty()) {
        cv_.wait(l);
        continue;
      }
      const int64_t now = NowUs();
      if (q_.top().when > now) {
        cv_.wait_for(l, std::chrono::microseconds(q_.top().when - now));
        continue;
      }
      std::function<void()> fn = q_.top().fn;
      q_.pop();
      l.unlock();
      fn();
      l.lock();
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::priority_queue<Item> q_;
  uint64_t seq_ = 0;
  bool stop_ = false;
  std::thread thread_;
};

// One simulated worker's state and timestamps.
struct Sim {
  int index = 0;
  v1::WorkerService::Stub* stub = nullptr;
  int channel = 0;  // Which of the process's connections.
  std::string worker_id;
  std::string worker_token;
  absl::Mutex mu;  // job_id and generation: heartbeats read them.
  std::string job_id;
  int64_t generation = 0;
  int32_t rank = -1;
  std::atomic<bool> leaving{false};
  int64_t reg_sent = 0, reg_done = 0, join_sent = 0, join_done = 0;
  std::vector<int64_t> bar_sent, bar_done;
  std::string error;
  int round = 0;  // The barrier round it waits at (shared stream).
  std::unique_ptr<
      grpc::ClientBidiReactor<v1::BarrierArrivals, v1::BarrierReleases>>
      barrier_stream;
};

// Every call after Register carries the worker's credential.
void AttachCredential(grpc::ClientContext& ctx, const Sim& s) {
  AttachWorkerCredential(&ctx, {s.worker_id, s.worker_token});
}

template <typename Req, typename Resp>
struct Call {
  grpc::ClientContext ctx;
  Req req;
  Resp resp;
};

class Clients {
 public:
  Clients(const std::string& target, int n, int first_index, int rounds,
          int channels, BarrierProtocol protocol)
      : rounds_(rounds), protocol_(protocol), done_(n), sims_(n) {
    for (int c = 0; c < channels; ++c) {
      grpc::ChannelArguments args;
      // A connection of its own per channel.
      args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
      args.SetInt("ringleader.bench.channel", c);
      auto ch = grpc::CreateCustomChannel(
          target, grpc::InsecureChannelCredentials(), args);
      ch->WaitForConnected(std::chrono::system_clock::now() +
                           std::chrono::seconds(10));
      stubs_.push_back(v1::WorkerService::NewStub(ch));
      if (protocol == BarrierProtocol::kShared && rounds > 0) {
        shared_.push_back(
            std::make_unique<SharedBarrierStream>(this, stubs_.back().get()));
      }
    }
    for (int i = 0; i < n; ++i) {
      sims_[i] = std::make_unique<Sim>();
      sims_[i]->index = first_index + i;
      sims_[i]->channel = i % channels;
      sims_[i]->stub = stubs_[sims_[i]->channel].get();
      sims_[i]->bar_sent.assign(rounds, 0);
      sims_[i]->bar_done.assign(rounds, 0);
    }
  }

  void Run(int64_t start_at_us, int64_t heartbeat_ms) {
    heartbeat_us_ = heartbeat_ms * 1000;
    const int64_t wait = start_at_us - NowUs();
    if (wait > 0) absl::SleepFor(absl::Microseconds(wait));
    for (auto& s : sims_) Register(s.get());
    done_.Wait();
    // Everyone passed every barrier (or failed): leave.
    absl::BlockingCounter left(static_cast<int>(sims_.size()));
    for (auto& s : sims_) {
      s->leaving = true;
      if (s->worker_id.empty()) {
        left.DecrementCount();
        continue;
      }
      auto* c = new Call<v1::LeaveRequest, v1::LeaveResponse>();
      c->req.set_worker_id(s->worker_id);
      c->req.set_reason("benchmark done");
      SetDeadline(c->ctx, absl::Seconds(30));
      AttachCredential(c->ctx, *s);
      s->stub->async()->Leave(&c->ctx, &c->req, &c->resp,
                              [c, &left](grpc::Status) {
                                delete c;
                                left.DecrementCount();
                              });
    }
    left.Wait();
    for (auto& stream : shared_) stream->Close();
  }

  void Write(const std::string& path) const {
    std::ofstream out(path);
    for (const auto& s : sims_) {
      out << "w " << s->index << " " << s->reg_sent << " " << s->reg_done << " "
          << s->join_sent << " " << s->join_done << " " << s->rank << " "
          << s->generation << " " << absl::StrJoin(s->bar_sent, ",") << " "
          << absl::StrJoin(s->bar_done, ",") << " "
          << (s->error.empty() ? "ok" : "ERR") << "\n";
      if (!s->error.empty()) out << "e " << s->index << " " << s->error << "\n";
    }
  }

 private:
  void Fail(Sim* s, const std::string& what, const grpc::Status& st) {
    s->error = absl::StrCat(what, ": ", st.error_message());
    done_.DecrementCount();
  }

  void Register(Sim* s) {
    auto* c = new Call<v1::RegisterRequest, v1::RegisterResponse>();
    c->req.set_hostname(absl::StrCat("sim", s->index / 8));
    c->req.set_pid(100000 + s->index);
    c->req.set_device("cpu");
    c->req.set_address("127.0.0.1");
    SetDeadline(c->ctx, absl::Seconds(60));
    s->reg_sent = NowUs();
    s->stub->async()->Register(&c->ctx, &c->req, &c->resp,
                               [this, s, c](grpc::Status st) {
                                 s->reg_done = NowUs();
                                 if (!st.ok()) {
                                   delete c;
                                   return Fail(s, "register", st);
                                 }
                                 s->worker_id = c->resp.worker_id();
                                 s->worker_token = c->resp.worker_token();
                                 delete c;
                                 Heartbeat(s, /*until_assigned=*/true, 0);
                                 // Keep-alive heartbeats at the interval the
                                 // coordinator asked for, each worker at its
                                 // own phase.
                                 ScheduleBeat(s);
                               });
  }

  void ScheduleBeat(Sim* s) {
    sched_.At(NowUs() + heartbeat_us_, [this, s] {
      if (s->leaving) return;
      Heartbeat(s, false, 0);
      ScheduleBeat(s);
    });
  }

  void Heartbeat(Sim* s, bool until_assigned, int attempt) {
    auto* c = new Call<v1::HeartbeatRequest, v1::HeartbeatResponse>();
    c->req.set_worker_id(s->worker_id);
    {
      absl::MutexLock l(&s->mu);
      c->req.set_job_id(s->job_id);
      c->req.set_generation(s->generation);
    }
    SetDeadline(c->ctx, absl::Seconds(30));
    AttachCredential(c->ctx, *s);
    s->stub->async()->Heartbeat(
        &c->ctx, &c->req, &c->resp,
        [this, s, c, until_assigned, attempt](grpc::Status st) {
          const bool assigned = st.ok() && c->resp.has_assignment();
          std::string job = assigned ? c->resp.assignment().job_id() : "";
          delete c;
          if (!until_assigned) return;
          if (assigned) {
            {
              absl::MutexLock l(&s->mu);
              s->job_id = job;
            }
            return Join(s);
          }
          if (attempt >= 600) {
            return Fail(s, "no assignment", grpc::Status::CANCELLED);
          }
          sched_.At(NowUs() + 100000,
                    [this, s, attempt] { Heartbeat(s, true, attempt + 1); });
        });
  }

  void Join(Sim* s) {
    auto* c = new Call<v1::JoinRendezvousRequest, v1::JoinRendezvousResponse>();
    {
      absl::MutexLock l(&s->mu);
      c->req.set_job_id(s->job_id);
    }
    c->req.set_worker_id(s->worker_id);
    c->req.set_timeout_ms(120000);
    SetDeadline(c->ctx, absl::Seconds(130));
    AttachCredential(c->ctx, *s);
    s->join_sent = NowUs();
    s->stub->async()->JoinRendezvous(&c->ctx, &c->req, &c->resp,
                                     [this, s, c](grpc::Status st) {
                                       s->join_done = NowUs();
                                       if (!st.ok()) {
                                         delete c;
                                         return Fail(s, "join", st);
                                       }
                                       {
                                         absl::MutexLock l(&s->mu);
                                         s->generation = c->resp.generation();
                                       }
                                       s->rank = c->resp.rank();
                                       delete c;
                                       switch (protocol_) {
                                         case BarrierProtocol::kStream:
                                           return OpenBarrierStream(s);
                                         case BarrierProtocol::kShared:
                                           return JoinSharedStream(s);
                                         case BarrierProtocol::kUnary:
                                           return Barrier(s, 0);
                                       }
                                     });
  }

  void Barrier(Sim* s, int round) {
    if (round >= rounds_) {
      done_.DecrementCount();
      return;
    }
    auto* c = new Call<v1::BarrierRequest, v1::BarrierResponse>();
    c->req = ArrivalOf(*s, round);
    SetDeadline(c->ctx, absl::Seconds(70));
    AttachCredential(c->ctx, *s);
    s->bar_sent[round] = NowUs();
    s->stub->async()->Barrier(&c->ctx, &c->req, &c->resp,
                              [this, s, c, round](grpc::Status st) {
                                s->bar_done[round] = NowUs();
                                delete c;
                                if (!st.ok()) return Fail(s, "barrier", st);
                                Barrier(s, round + 1);
                              });
  }

  // A worker's barrier rounds over one BarrierStream: the arrival of round
  // r+1 is written once round r's release was read (and the previous write
  // completed: one write in flight at a time).
  class BarrierRounds final
      : public grpc::ClientBidiReactor<v1::BarrierArrivals,
                                       v1::BarrierReleases> {
   public:
    BarrierRounds(Clients* owner, Sim* s) : owner_(owner), s_(s) {
      SetDeadline(ctx_, absl::Seconds(120));
      AttachCredential(ctx_, *s);
      s->stub->async()->BarrierStream(&ctx_, this);
      StartRead(&releases_);
      StartCall();
      Arrive();
    }
    void OnWriteDone(bool ok) override {
      if (!ok) return;  // The read side sees the failure too.
      if (--turns_ == 0) Next();
    }
    void OnReadDone(bool ok) override {
      if (!ok) return;  // OnDone has the status.
      s_->bar_done[round_] = NowUs();
      if (releases_.releases_size() != 1 || releases_.releases(0).code() != 0) {
        error_ =
            absl::StrCat("barrier release: ", releases_.ShortDebugString());
        ctx_.TryCancel();
        return;
      }
      ++round_;
      if (round_ < owner_->rounds_) StartRead(&releases_);
      if (--turns_ == 0) Next();
    }
    void OnWritesDoneDone(bool) override {}
    void OnDone(const grpc::Status& st) override {
      if (error_.empty() && !st.ok()) error_ = st.error_message();
      if (error_.empty() && round_ < owner_->rounds_) error_ = "stream ended";
      if (!error_.empty()) {
        s_->error = error_;
      }
      owner_->done_.DecrementCount();
    }

   private:
    void Next() {
      if (round_ >= owner_->rounds_) {
        StartWritesDone();
        return;
      }
      Arrive();
    }
    void Arrive() {
      turns_ = 2;  // The write's completion and the release.
      arrivals_.Clear();
      *arrivals_.add_arrivals() = ArrivalOf(*s_, round_);
      s_->bar_sent[round_] = NowUs();
      StartWrite(&arrivals_);
    }
    Clients* const owner_;
    Sim* const s_;
    grpc::ClientContext ctx_;
    v1::BarrierArrivals arrivals_;
    v1::BarrierReleases releases_;
    int round_ = 0;
    std::atomic<int> turns_{0};
    std::string error_;
  };

  static v1::BarrierRequest ArrivalOf(const Sim& s, int round) {
    v1::BarrierRequest req;
    req.set_job_id(s.job_id);
    req.set_generation(s.generation);
    req.set_rank(s.rank);
    req.set_name(absl::StrCat("bench-", round));
    req.set_timeout_ms(60000);
    return req;
  }

  // One BarrierStream per connection, carrying the barrier rounds of every
  // worker of this process on that connection: what a host agent serving
  // its local ranks would do. A worker's arrival at round r+1 is queued as
  // soon as its release of round r is read; queued arrivals leave together
  // in the next write (one write in flight at a time), and the coordinator
  // coalesces the releases of a round likewise.
  class SharedBarrierStream final
      : public grpc::ClientBidiReactor<v1::BarrierArrivals,
                                       v1::BarrierReleases> {
   public:
    SharedBarrierStream(Clients* owner, v1::WorkerService::Stub* stub)
        : owner_(owner) {
      SetDeadline(ctx_, absl::Seconds(600));
      stub->async()->BarrierStream(&ctx_, this);
      AddHold();  // Until Close: workers may still join.
      StartRead(&releases_);
      StartCall();
    }

    // A worker holding its rank starts its rounds on this stream.
    void Join(Sim* s) {
      std::optional<grpc::Status> ended;
      {
        absl::MutexLock lock(&mu_);
        if (ended_) {
          ended = status_;
        } else {
          by_rank_[s->rank] = s;
          // The stream opened before this worker registered: its credential
          // travels in-band, ahead of its first arrival.
          v1::WorkerCredential* c = pending_.add_credentials();
          c->set_worker_id(s->worker_id);
          c->set_worker_token(s->worker_token);
          Queue(s);
          if (!TakeWriteLocked()) return;
        }
      }
      if (ended.has_value()) return owner_->Fail(s, "barrier stream", *ended);
      StartWrite(&arrivals_);
    }

    // Every worker is done with its rounds and left: ends the call (cancels
    // it: nothing is in flight any more).
    void Close() {
      RemoveHold();
      ctx_.TryCancel();
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(&done_));
    }

    void OnWriteDone(bool ok) override {
      if (!ok) return Broke("a write failed");
      bool write;
      {
        absl::MutexLock lock(&mu_);
        writing_ = false;
        write = TakeWriteLocked();
      }
      if (write) StartWrite(&arrivals_);
    }

    void OnReadDone(bool ok) override {
      // OnDone waits for Close's RemoveHold, which waits for every worker:
      // the workers still on the stream fail now.
      if (!ok) return Broke("the stream ended");
      const int64_t now = NowUs();
      int finished = 0;
      std::vector<std::pair<Sim*, std::string>> failed;
      bool write;
      {
        absl::MutexLock lock(&mu_);
        for (const v1::BarrierRelease& r : releases_.releases()) {
          auto it = by_rank_.find(r.rank());
          if (it == by_rank_.end()) continue;  // Not ours: cannot happen.
          Sim* s = it->second;
          s->bar_done[s->round] = now;
          if (r.code() != 0) {
            failed.emplace_back(s, absl::StrCat("barrier release: code ",
                                                r.code(), " ", r.message()));
            by_rank_.erase(it);
            continue;
          }
          if (++s->round < owner_->rounds_) {
            Queue(s);
          } else {
            ++finished;
            by_rank_.erase(it);
          }
        }
        write = TakeWriteLocked();
      }
      if (write) StartWrite(&arrivals_);
      StartRead(&releases_);  // Fails once the call ends.
      for (int i = 0; i < finished; ++i) owner_->done_.DecrementCount();
      for (auto& [s, why] : failed) {
        owner_->Fail(s, why, grpc::Status::OK);
      }
    }

    void OnDone(const grpc::Status& st) override {
      std::vector<Sim*> stranded;
      {
        absl::MutexLock lock(&mu_);
        ended_ = true;
        status_ = st.ok() ? grpc::Status(grpc::StatusCode::INTERNAL,
                                         "the barrier stream ended")
                          : st;
        for (auto& [rank, s] : by_rank_) stranded.push_back(s);
        by_rank_.clear();
      }
      for (Sim* s : stranded) owner_->Fail(s, "barrier stream", st);
      absl::MutexLock lock(&mu_);
      done_ = true;
    }

   private:
    // The call is over (Close has not run): fails the workers on it, and
    // any that join later.
    void Broke(const std::string& why) {
      const grpc::Status status(grpc::StatusCode::UNAVAILABLE, why);
      std::vector<Sim*> stranded;
      {
        absl::MutexLock lock(&mu_);
        if (ended_) return;
        ended_ = true;
        status_ = status;
        for (auto& [rank, s] : by_rank_) stranded.push_back(s);
        by_rank_.clear();
      }
      for (Sim* s : stranded) owner_->Fail(s, "barrier stream", status);
    }

    void Queue(Sim* s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      s->bar_sent[s->round] = NowUs();
      *pending_.add_arrivals() = ArrivalOf(*s, s->round);
    }
    // Takes what is queued into arrivals_ for the caller to write, off the
    // lock, unless a write is in flight (its completion writes what queued
    // meanwhile). Only the writer touches arrivals_.
    bool TakeWriteLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      if (writing_ || pending_.arrivals_size() == 0 || ended_) return false;
      writing_ = true;
      arrivals_.Swap(&pending_);
      pending_.Clear();
      return true;
    }

    Clients* const owner_;
    grpc::ClientContext ctx_;
    v1::BarrierReleases releases_;
    v1::BarrierArrivals arrivals_;
    absl::Mutex mu_;
    v1::BarrierArrivals pending_ ABSL_GUARDED_BY(mu_);
    absl::flat_hash_map<int32_t, Sim*> by_rank_ ABSL_GUARDED_BY(mu_);
    bool writing_ ABSL_GUARDED_BY(mu_) = false;
    bool ended_ ABSL_GUARDED_BY(mu_) = false;
    bool done_ ABSL_GUARDED_BY(mu_) = false;
    grpc::Status status_ ABSL_GUARDED_BY(mu_);
  };

  void JoinSharedStream(Sim* s) {
    if (rounds_ == 0) {
      done_.DecrementCount();
      return;
    }
    shared_[s->channel]->Join(s);
  }

  void OpenBarrierStream(Sim* s) {
    if (rounds_ == 0) {
      done_.DecrementCount();
      return;
    }
    s->barrier_stream = std::make_unique<BarrierRounds>(this, s);
  }

  const int rounds_;
  const BarrierProtocol protocol_;
  int64_t heartbeat_us_ = 1000000;
  absl::BlockingCounter done_;
  std::vector<std::unique_ptr<v1::WorkerService::Stub>> stubs_;
  std::vector<std::unique_ptr<SharedBarrierStream>> shared_;
  std::vector<std::unique_ptr<Sim>> sims_;
  Scheduler sched_;
};

}  // namespace

std::optional<BarrierProtocol> ParseBarrierProtocol(absl::string_view name) {
  if (name == "unary") return BarrierProtocol::kUnary;
  if (name == "stream") return BarrierProtocol::kStream;
  if (name == "shared") return BarrierProtocol::kShared;
  return std::nullopt;
}

void RunClients(const ClientsConfig& config, const std::string& out) {
  Clients clients(config.coordinator, config.workers, config.first_index,
                  config.rounds, config.channels, config.protocol);
  clients.Run(config.start_at_us, config.heartbeat_ms);
  clients.Write(out);
}

}  // namespace ringleader::bench
