#include "common/http/connection_loop.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <thread>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"

namespace ringleader::http {
namespace {

// epoll data of the two descriptors that are not connections.
constexpr uint64_t kListenId = 0;
constexpr uint64_t kWakeId = 1;
// Deadlines are checked this often (and the accept paused for fd
// exhaustion retried).
constexpr int kSweepMs = 200;
constexpr size_t kReadChunk = 16 << 10;

std::string Canned(int status, absl::string_view reason) {
  return absl::StrCat("HTTP/1.1 ", status, " ", reason,
                      "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
}

std::string CannedFor(int status) {
  switch (status) {
    case 400:
      return Canned(400, "Bad Request");
    case 413:
      return Canned(413, "Payload Too Large");
    case 431:
      return Canned(431, "Request Header Fields Too Large");
    default:
      return Canned(503, "Service Unavailable");
  }
}

// The peer's address and port of an accepted socket.
std::pair<std::string, int> PeerOf(const sockaddr_storage& a) {
  char text[INET6_ADDRSTRLEN] = "";
  if (a.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&a);
    ::inet_ntop(AF_INET, &in->sin_addr, text, sizeof(text));
    return {text, ntohs(in->sin_port)};
  }
  const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&a);
  ::inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof(text));
  return {text, ntohs(in6->sin6_port)};
}

}  // namespace

class ConnectionLoop::Impl {
 public:
  Impl(int listen_fd, Handler handler, TlsContext* tls,
       const LoopOptions& options)
      : options_(options), tls_(tls), listen_fd_(listen_fd) {
    pool_ =
        std::make_unique<HandlerPool>(options.threads, options.max_queued,
                                      std::move(handler), [this] { Wake(); });
  }
  ~Impl();
  absl::Status Init();
  void Start() {
    thread_ = std::thread([this] { Run(); });
  }
  LoopStats stats() const {
    absl::MutexLock lock(&stats_mu_);
    return stats_;
  }

 private:
  enum class State { kHandshake, kReading, kQueued, kWriting };
  struct Conn {
    int fd = -1;
    uint64_t id = 0;
    std::string peer_ip;
    int peer_port = 0;
    State state = State::kHandshake;
    absl::Time deadline;
    std::unique_ptr<Transport> transport;
    std::string in;
    std::string out;
    size_t written = 0;
    bool watched = false;  // In the epoll set.
  };

  void Wake() {
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(wake_fd_, &one, sizeof(one));
  }
  void Run();
  void Accept();
  void OnEvent(Conn& c);
  void Handshake(Conn& c);
  void Read(Conn& c);
  void Write(Conn& c);
  void Respond(Conn& c, std::string response);
  void Watch(Conn& c, uint32_t events);
  void Close(uint64_t id, bool timed_out);
  void DeliverResponses();
  void Sweep();
  template <typename F>
  void Count(F f) {
    absl::MutexLock lock(&stats_mu_);
    f(stats_);
  }

  const LoopOptions options_;
  TlsContext* const tls_;
  const int listen_fd_;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  std::atomic<bool> stopping_{false};
  std::unique_ptr<HandlerPool> pool_;
  std::thread thread_;
  // The loop thread's own.
  std::unordered_map<uint64_t, std::unique_ptr<Conn>> conns_;
  std::unordered_map<std::string, int> per_peer_;
  uint64_t next_id_ = 2;
  char read_buffer_[kReadChunk];
  bool accept_paused_ = false;
  mutable absl::Mutex stats_mu_;
  LoopStats stats_ ABSL_GUARDED_BY(stats_mu_);
};

absl::Status ConnectionLoop::Impl::Init() {
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (epoll_fd_ < 0 || wake_fd_ < 0) {
    return absl::InternalError(
        absl::StrCat("epoll/eventfd: ", std::strerror(errno)));
  }
  epoll_event listen{};
  listen.events = EPOLLIN;
  listen.data.u64 = kListenId;
  epoll_event wake{};
  wake.events = EPOLLIN;
  wake.data.u64 = kWakeId;
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listen_fd_, &listen) != 0 ||
      ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &wake) != 0) {
    return absl::InternalError(
        absl::StrCat("epoll_ctl: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

ConnectionLoop::Impl::~Impl() {
  stopping_ = true;
  if (thread_.joinable()) {
    Wake();
    thread_.join();
  }
  pool_.reset();  // Before the connections its responses name.
  for (auto& [id, c] : conns_) ::close(c->fd);
  if (listen_fd_ >= 0) ::close(listen_fd_);
  if (epoll_fd_ >= 0) ::close(epoll_fd_);
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

void ConnectionLoop::Impl::Run() {
  epoll_event events[64];
  absl::Time next_sweep = absl::Now();
  // Bounded by the loop's life: it ends when the destructor sets stopping_.
  while (!stopping_) {
    const int n = ::epoll_wait(epoll_fd_, events, 64, kSweepMs);
    for (int i = 0; i < n; ++i) {
      const uint64_t id = events[i].data.u64;
      if (id == kListenId) {
        Accept();
      } else if (id == kWakeId) {
        uint64_t count = 0;
        [[maybe_unused]] ssize_t r = ::read(wake_fd_, &count, sizeof(count));
      } else if (auto it = conns_.find(id); it != conns_.end()) {
        OnEvent(*it->second);
      }
    }
    DeliverResponses();
    if (absl::Now() >= next_sweep) {
      Sweep();
      next_sweep = absl::Now() + absl::Milliseconds(kSweepMs);
    }
  }
}

void ConnectionLoop::Impl::Accept() {
  // Bounded: the backlog empties, or a limit stops it.
  while (true) {
    sockaddr_storage addr{};
    socklen_t len = sizeof(addr);
    const int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&addr),
                             &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
          errno == ENOMEM) {
        // No descriptor to take it with: listen again at the next sweep
        // rather than spin on a socket that stays readable.
        epoll_event none{};
        none.data.u64 = kListenId;
        ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, listen_fd_, &none);
        accept_paused_ = true;
      }
      return;
    }
    auto [ip, port] = PeerOf(addr);
    int& from_peer = per_peer_[ip];
    if (static_cast<int>(conns_.size()) >= options_.max_connections ||
        from_peer >= options_.max_per_peer) {
      if (from_peer == 0) per_peer_.erase(ip);
      ::close(fd);
      Count([](LoopStats& s) { ++s.refused; });
      continue;
    }
    ++from_peer;
    auto c = std::make_unique<Conn>();
    c->fd = fd;
    c->id = next_id_++;
    c->peer_ip = std::move(ip);
    c->peer_port = port;
    c->deadline = absl::Now() + options_.request_timeout;
    c->transport = tls_ != nullptr ? tls_->Wrap(fd) : PlainTransport(fd);
    Conn& conn = *c;
    conns_[c->id] = std::move(c);
    Count([&](LoopStats& s) {
      ++s.accepted;
      s.open = static_cast<int64_t>(conns_.size());
      s.peak_open = std::max(s.peak_open, s.open);
    });
    if (conn.transport == nullptr) {
      Close(conn.id, false);
      continue;
    }
    Handshake(conn);  // Plain TCP: straight to reading what is there.
  }
}

void ConnectionLoop::Impl::OnEvent(Conn& c) {
  switch (c.state) {
    case State::kHandshake:
      return Handshake(c);
    case State::kReading:
      return Read(c);
    case State::kWriting:
      return Write(c);
    case State::kQueued:
      return;  // Not watched; a hang-up is found when the response is sent.
  }
}

void ConnectionLoop::Impl::Watch(Conn& c, uint32_t events) {
  // Nothing to wait for (a request with a thread): out of the set, since a
  // hang-up would be reported there, level-triggered, until it is answered.
  if (events == 0) {
    if (c.watched) ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, c.fd, nullptr);
    c.watched = false;
    return;
  }
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = c.id;
  ::epoll_ctl(epoll_fd_, c.watched ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, c.fd, &ev);
  c.watched = true;
}

void ConnectionLoop::Impl::Handshake(Conn& c) {
  const Io io = c.transport->Handshake();
  switch (io.kind) {
    case Io::Kind::kDone:
      c.state = State::kReading;
      return Read(c);
    case Io::Kind::kWantRead:
      return Watch(c, EPOLLIN);
    case Io::Kind::kWantWrite:
      return Watch(c, EPOLLOUT);
    default:
      return Close(c.id, false);
  }
}

void ConnectionLoop::Impl::Read(Conn& c) {
  // Bounded: each pass reads, and the limits end a request that grows.
  while (true) {
    // Into the loop's buffer, then only what came onto the connection's:
    // an idle connection holds no read buffer of its own.
    const Io io = c.transport->Read(read_buffer_, sizeof(read_buffer_));
    if (io.kind == Io::Kind::kDone) c.in.append(read_buffer_, io.n);
    if (io.kind == Io::Kind::kWantRead) return Watch(c, EPOLLIN);
    if (io.kind == Io::Kind::kWantWrite) return Watch(c, EPOLLOUT);
    if (io.kind != Io::Kind::kDone) return Close(c.id, false);
    const RequestProgress p = CheckRequest(c.in, options_.limits);
    if (p.kind == RequestProgress::Kind::kIncomplete) continue;
    if (p.kind != RequestProgress::Kind::kComplete) {
      return Respond(c, CannedFor(p.status));
    }
    c.in.resize(p.bytes);  // One request per connection.
    HandlerPool::Job job{c.id, std::move(c.in), c.peer_ip, c.peer_port};
    c.in.clear();
    if (!pool_->Submit(std::move(job))) return Respond(c, CannedFor(503));
    c.state = State::kQueued;
    return Watch(c, 0);
  }
}

void ConnectionLoop::Impl::Respond(Conn& c, std::string response) {
  c.state = State::kWriting;
  c.out = std::move(response);
  c.written = 0;
  c.deadline = absl::Now() + options_.response_timeout;
  Write(c);
}

void ConnectionLoop::Impl::Write(Conn& c) {
  // Bounded: each pass writes, or waits for the socket.
  while (c.written < c.out.size()) {
    const Io io =
        c.transport->Write(c.out.data() + c.written, c.out.size() - c.written);
    if (io.kind == Io::Kind::kWantWrite) return Watch(c, EPOLLOUT);
    if (io.kind == Io::Kind::kWantRead) return Watch(c, EPOLLIN);
    if (io.kind != Io::Kind::kDone) return Close(c.id, false);
    c.written += io.n;
  }
  c.transport->Shutdown();
  Count([](LoopStats& s) { ++s.served; });
  Close(c.id, false);
}

void ConnectionLoop::Impl::DeliverResponses() {
  for (HandlerPool::Done& d : pool_->TakeDone()) {
    auto it = conns_.find(d.id);
    if (it == conns_.end()) continue;  // Closed meanwhile.
    Respond(*it->second, std::move(d.response));
  }
}

void ConnectionLoop::Impl::Close(uint64_t id, bool timed_out) {
  auto it = conns_.find(id);
  if (it == conns_.end()) return;
  Conn& c = *it->second;
  // Closing the descriptor takes it out of the epoll set.
  ::close(c.fd);
  if (auto p = per_peer_.find(c.peer_ip);
      p != per_peer_.end() && --p->second <= 0) {
    per_peer_.erase(p);
  }
  conns_.erase(it);
  Count([&](LoopStats& s) {
    s.open = static_cast<int64_t>(conns_.size());
    if (timed_out) ++s.timed_out;
  });
}

void ConnectionLoop::Impl::Sweep() {
  const absl::Time now = absl::Now();
  std::vector<uint64_t> expired;
  for (const auto& [id, c] : conns_) {
    if (c->state != State::kQueued && c->deadline <= now) {
      expired.push_back(id);
    }
  }
  for (uint64_t id : expired) Close(id, true);
  if (accept_paused_) {
    accept_paused_ = false;
    epoll_event listen{};
    listen.events = EPOLLIN;
    listen.data.u64 = kListenId;
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, listen_fd_, &listen);
  }
}

ConnectionLoop::ConnectionLoop(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}

ConnectionLoop::~ConnectionLoop() = default;

absl::StatusOr<std::unique_ptr<ConnectionLoop>> ConnectionLoop::Start(
    int listen_fd, Handler handler, TlsContext* tls,
    const LoopOptions& options) {
  auto impl =
      std::make_unique<Impl>(listen_fd, std::move(handler), tls, options);
  if (absl::Status s = impl->Init(); !s.ok()) return s;
  impl->Start();
  return std::unique_ptr<ConnectionLoop>(new ConnectionLoop(std::move(impl)));
}

LoopStats ConnectionLoop::stats() const { return impl_->stats(); }

}  // namespace ringleader::http
