#include "worker/comm/gloo_communicator.h"

#include <net/if.h>
#include <signal.h>

#include <chrono>
#include <exception>
#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gloo/allreduce.h"
#include "gloo/broadcast.h"
#include "gloo/common/error.h"
#include "gloo/common/logging.h"
#include "gloo/context.h"
#include "gloo/rendezvous/context.h"
#include "gloo/transport/tcp/attr.h"
#include "gloo/transport/tcp/device.h"
#include "gloo/types.h"
#include "worker/comm/collective_args.h"
#include "worker/comm/float16_sum.h"
#include "worker/comm/gloo_kv_store.h"

namespace ringleader {

namespace {

// A slot prefix none of gloo's collectives uses (they use 0x01..0x08).
constexpr uint8_t kAbortSlotPrefix = 0x7f;

std::chrono::milliseconds ToMs(absl::Duration d) {
  return std::chrono::milliseconds(absl::ToInt64Milliseconds(d));
}

// Every exception gloo may throw, as a status. Gloo has no timeout exception
// type in this version: timeouts are IoExceptions saying "Timed out".
absl::Status RunCatching(const std::function<void()>& fn) {
  try {
    fn();
    return absl::OkStatus();
  } catch (const ::gloo::IoException& e) {
    if (absl::StrContains(e.what(), "Timed out") ||
        absl::StrContains(e.what(), "timeout")) {
      return absl::DeadlineExceededError(absl::StrCat("gloo: ", e.what()));
    }
    return absl::UnavailableError(absl::StrCat("gloo: ", e.what()));
  } catch (const ::gloo::EnforceNotMet& e) {
    return absl::InternalError(absl::StrCat("gloo assertion: ", e.what()));
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("gloo: ", e.what()));
  } catch (...) {
    return absl::UnknownError("gloo: unknown exception");
  }
}

template <typename T>
void SumInto(void* c, const void* a, const void* b, size_t n) {
  T* out = static_cast<T*>(c);
  const T* x = static_cast<const T*>(a);
  const T* y = static_cast<const T*>(b);
  for (size_t i = 0; i < n; ++i) out[i] = x[i] + y[i];
}

// Gloo has no 16-bit float of its own to sum bf16 (its float16 type is
// fp16 only), so both 16-bit types go through one reduction function each:
// every pairwise reduction of the ring widens to float32 and rounds the sum
// back once, which is a correctly rounded 16-bit add (worker/comm/
// float16_sum.h), as NCCL's ring does on the GPU.
void AddFp16(void* c, const void* a, const void* b, size_t n) {
  AddFloat16(Float16Format::kFp16, static_cast<uint16_t*>(c),
             static_cast<const uint16_t*>(a), static_cast<const uint16_t*>(b),
             n);
}
void AddBf16(void* c, const void* a, const void* b, size_t n) {
  AddFloat16(Float16Format::kBf16, static_cast<uint16_t*>(c),
             static_cast<const uint16_t*>(a), static_cast<const uint16_t*>(b),
             n);
}

// `T` is the element's storage (its size is what gloo needs); `reduce` sums.
template <typename T>
void AllReduce(const std::shared_ptr<::gloo::Context>& context, void* data,
               size_t count, uint32_t tag, std::chrono::milliseconds timeout,
               const ::gloo::AllreduceOptions::Func& reduce) {
  ::gloo::AllreduceOptions opts(context);
  opts.setOutput(static_cast<T*>(data), count);
  opts.setReduceFunction(reduce);
  opts.setTag(tag);
  opts.setTimeout(timeout);
  ::gloo::allreduce(opts);
}

// A collective as it runs on one lane's mesh, with its tag.
using LaneBody = std::function<absl::Status(
    const std::shared_ptr<::gloo::Context>& context, uint32_t tag)>;

// The all-reduce of `count` elements of `type`, or nullopt for a type this
// backend does not know.
std::optional<LaneBody> AllReduceBody(void* data, size_t count, DataType type,
                                      std::chrono::milliseconds timeout) {
  auto body = [&](auto element,
                  ::gloo::AllreduceOptions::Func reduce) -> LaneBody {
    using T = decltype(element);
    return [data, count, timeout, reduce](
               const std::shared_ptr<::gloo::Context>& ctx, uint32_t tag) {
      return RunCatching(
          [&] { AllReduce<T>(ctx, data, count, tag, timeout, reduce); });
    };
  };
  switch (type) {
    case DataType::kFloat32:
      return body(float{}, &SumInto<float>);
    case DataType::kFloat64:
      return body(double{}, &SumInto<double>);
    case DataType::kInt64:
      return body(int64_t{}, &SumInto<int64_t>);
    case DataType::kFloat16:
      return body(uint16_t{}, &AddFp16);
    case DataType::kBFloat16:
      return body(uint16_t{}, &AddBf16);
  }
  return std::nullopt;
}

// Lane 0 keeps the one-lane prefix, so a one-lane communicator publishes
// exactly what it always did; gloo's own keys ("rank_0", ...) cannot collide
// with "lane<k>/...".
std::string LanePrefix(int comm_index, int lane) {
  if (lane == 0) return absl::StrCat("gloo/", comm_index, "/");
  return absl::StrCat("gloo/", comm_index, "/lane", lane, "/");
}

// Connects one lane's full mesh through the KV store under `prefix`.
absl::StatusOr<std::shared_ptr<::gloo::Context>> ConnectMesh(
    KvClient* kv, const std::string& prefix, int rank, int world_size,
    std::shared_ptr<::gloo::transport::Device> device, absl::Duration timeout) {
  GlooKvStore store(kv, prefix, timeout);
  auto context =
      std::make_shared<::gloo::rendezvous::Context>(rank, world_size);
  absl::Status s = RunCatching([&] {
    context->setTimeout(ToMs(timeout));
    context->connectFullMesh(store, device);
  });
  if (!s.ok()) {
    // The store's own failure says more (ABORTED: the generation ended).
    const absl::Status kv_error = store.first_error();
    const absl::Status& why = kv_error.ok() ? s : kv_error;
    return absl::Status(why.code(), absl::StrCat("gloo bootstrap of rank ",
                                                 rank, "/", world_size, " (",
                                                 prefix, "): ", why.message()));
  }
  return context;
}

// Gloo's TCP pairs write with plain writev(2): a write to a peer that exited
// raises SIGPIPE, whose default action kills this process, when the peer's
// exit must be an error of the pending collective (which the worker
// recovers from). Ignored process-wide, once, before the first pair exists;
// every other writer in our daemons (gRPC, files) checks its errors anyway.
void IgnoreBrokenPipes() {
  static const bool ignored = [] {
    signal(SIGPIPE, SIG_IGN);
    return true;
  }();
  (void)ignored;
}

}  // namespace

absl::StatusOr<std::unique_ptr<GlooCommunicator>> GlooCommunicator::Create(
    KvClient* kv, int rank, int world_size, Options options) {
  if (absl::Status s = CheckMembership(kv, rank, world_size); !s.ok()) {
    return s;
  }
  if (options.timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("gloo timeout must be positive");
  }
  if (options.lanes < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("gloo lanes must be at least 1, not ", options.lanes));
  }

  // An existing interface name selects the interface; anything else is an
  // address or hostname to bind.
  ::gloo::transport::tcp::attr attr;
  if (!options.interface_or_host.empty() &&
      if_nametoindex(options.interface_or_host.c_str()) != 0) {
    attr.iface = options.interface_or_host;
  } else {
    attr.hostname = options.interface_or_host;
  }
  IgnoreBrokenPipes();
  std::shared_ptr<::gloo::transport::Device> device;
  absl::Status s =
      RunCatching([&] { device = ::gloo::transport::tcp::CreateDevice(attr); });
  if (!s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "gloo tcp device on '", options.interface_or_host, "': ", s.message()));
  }

  // Lanes share the device (one listening socket, one event loop, as
  // c10d's ProcessGroupGloo threads share theirs); each lane's mesh has its
  // own pairs. Every rank connects them in lane order.
  std::vector<std::shared_ptr<::gloo::Context>> contexts;
  for (int lane = 0; lane < options.lanes; ++lane) {
    absl::StatusOr<std::shared_ptr<::gloo::Context>> context =
        ConnectMesh(kv, LanePrefix(options.comm_index, lane), rank, world_size,
                    device, options.timeout);
    if (!context.ok()) return context.status();
    contexts.push_back(*std::move(context));
  }
  return std::unique_ptr<GlooCommunicator>(new GlooCommunicator(
      std::move(contexts), rank, world_size, std::move(options)));
}

GlooCommunicator::GlooCommunicator(
    std::vector<std::shared_ptr<::gloo::Context>> contexts, int rank,
    int world_size, Options options)
    : contexts_(std::move(contexts)),
      rank_(rank),
      world_size_(world_size),
      options_(std::move(options)),
      // Peers blocked on this rank learn of a failure at once instead of at
      // their timeout, on every lane.
      queue_([this] { FailPairs(); }, static_cast<int>(contexts_.size())) {}

GlooCommunicator::~GlooCommunicator() { Abort(); }

std::unique_ptr<Work> GlooCommunicator::AllReduceSumAsync(void* data,
                                                          size_t count,
                                                          DataType type) {
  return AllReduceSumAsyncThen(data, count, type, nullptr);
}

std::unique_ptr<Work> GlooCommunicator::AllReduceSumAsyncThen(
    void* data, size_t count, DataType type, std::function<void()> on_done) {
  auto ready = [&on_done](absl::Status s) {
    return ReadyWork(std::move(s), std::move(on_done));
  };
  if (std::optional<absl::Status> decided =
          AllReduceDecidedLocally(data, count)) {
    return ready(*std::move(decided));
  }
  std::optional<LaneBody> body =
      AllReduceBody(data, count, type, ToMs(options_.timeout));
  if (!body.has_value()) {
    return ready(absl::InvalidArgumentError("unknown data type"));
  }
  // The lanes (and their contexts) live as long as the queue that runs this.
  return queue_.Enqueue(
      [this, run = *std::move(body)](int lane, uint32_t seq) {
        return run(contexts_[static_cast<size_t>(lane)], seq);
      },
      std::move(on_done));
}

absl::Status GlooCommunicator::Broadcast(void* data, size_t bytes, int root) {
  return BroadcastAsync(data, bytes, root)->Wait();
}

// Round-robin like an all-reduce: which lane it takes only has to agree
// between ranks, and it does (its sequence number). On other lanes, later
// collectives may overtake it; they use other buffers, and the caller reads
// this one only after waiting for it.
std::unique_ptr<Work> GlooCommunicator::BroadcastAsync(void* data, size_t bytes,
                                                       int root) {
  if (std::optional<absl::Status> decided =
          BroadcastDecidedLocally(data, bytes, root, world_size_)) {
    return ReadyWork(*std::move(decided));
  }
  const std::chrono::milliseconds timeout = ToMs(options_.timeout);
  return queue_.Enqueue(
      [this, data, bytes, root, timeout](int lane, uint32_t tag) {
        return RunCatching([&] {
          ::gloo::BroadcastOptions opts(contexts_[static_cast<size_t>(lane)]);
          opts.setOutput(static_cast<uint8_t*>(data), bytes);
          opts.setRoot(root);
          opts.setTag(tag);
          opts.setTimeout(timeout);
          ::gloo::broadcast(opts);
        });
      },
      nullptr);
}

void GlooCommunicator::Abort() {
  // Queued operations fail at once; the one in flight throws.
  if (queue_.Abort()) FailPairs();
}

void GlooCommunicator::FailPairs() noexcept {
  for (const std::shared_ptr<::gloo::Context>& context : contexts_) {
    FailPairs(*context);
  }
}

void GlooCommunicator::FailPairs(::gloo::Context& context) noexcept {
  // Gloo's public API has no "fail this context". Pair::close() only closes
  // the sockets and leaves local waiters blocked until their timeout, and the
  // tcp::Pair header is not shipped by Debian's libgloo-dev. What gloo does
  // when a wait times out is what is wanted: it signals an IoException on
  // every pair of the context, which wakes every pending buffer and closes
  // the sockets (so peers fail too). So: post a receive nobody will send to,
  // on a slot no collective uses, and let it time out at once.
  uint64_t probe = 0;
  for (int i = 0; i < world_size_; ++i) {
    if (i == rank_) continue;
    try {
      auto buf = context.createUnboundBuffer(&probe, sizeof(probe));
      buf->recv(i, ::gloo::Slot::build(kAbortSlotPrefix, 0));
      buf->waitRecv(nullptr, std::chrono::milliseconds(1));
      // A completed receive cannot happen (no peer sends on this slot); if it
      // did, try the next peer.
    } catch (const ::gloo::IoException& e) {
      // A timeout here has signalled every pair: done. Otherwise this pair
      // had already failed; another may still be healthy.
      if (absl::StrContains(e.what(), "Timed out")) break;
    } catch (...) {
    }
  }
}

}  // namespace ringleader
