#include "worker/comm/shm_communicator.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <new>
#include <optional>
#include <utility>
#include <vector>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "worker/comm/collective_args.h"
#include "worker/comm/float16_sum.h"

namespace ringleader {
namespace {

constexpr uint64_t kMagic = 0x52494e47534d3031ull;  // "RINGSM01"
constexpr size_t kLine = 64;                        // One counter per line.
constexpr size_t kPage = 4096;
// Spins before sleeping on the futex: a peer that is a few microseconds
// behind costs no system call; one that is computing costs no CPU.
constexpr int kSpins = 2000;
// How often a sleeping waiter looks at its peers' locks and its deadline.
constexpr int64_t kPollNanos = 5'000'000;

size_t RoundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

absl::Status Errno(absl::string_view what) {
  const int e = errno;
  const std::string msg = absl::StrCat(what, ": ", strerror(e));
  switch (e) {
    case ENOSPC:
    case ENOMEM:
    case EMFILE:
    case ENFILE:
      return absl::ResourceExhaustedError(msg);
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(msg);
    case ENOENT:
      return absl::NotFoundError(msg);
    default:
      return absl::InternalError(msg);
  }
}

long Futex(std::atomic<uint32_t>* word, int op, uint32_t val,
           const struct timespec* timeout) {
  // Not FUTEX_PRIVATE_FLAG: the word is shared between processes.
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, val, timeout,
                 nullptr, 0);
}

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Reached: `value` is at or past `phase` (counters may wrap).
inline bool Reached(uint32_t value, uint32_t phase) {
  return static_cast<int32_t>(value - phase) >= 0;
}

std::string ReadFirstLine(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// out[i] = ((in[0][i] + in[1][i]) + in[2][i]) + ...: the ranks' values in
// rank order, whichever rank computes it. `out` may be one of the inputs:
// each block is read whole before it is written.
template <typename T>
void SumInRankOrder(char* out, const char* const* in, int world, size_t n) {
  constexpr size_t kBlock = 1024;  // 8 KiB of doubles: stays in L1.
  T acc[kBlock];
  for (size_t lo = 0; lo < n; lo += kBlock) {
    const size_t m = std::min(kBlock, n - lo);
    const T* first = reinterpret_cast<const T*>(in[0]) + lo;
    for (size_t i = 0; i < m; ++i) acc[i] = first[i];
    for (int r = 1; r < world; ++r) {
      const T* next = reinterpret_cast<const T*>(in[r]) + lo;
      for (size_t i = 0; i < m; ++i) acc[i] += next[i];
    }
    std::memcpy(out + lo * sizeof(T), acc, m * sizeof(T));
  }
}

}  // namespace

// The shared layout. Counters sit on their own cache lines so that ranks
// posting do not invalidate each other's lines.
struct ShmCommunicator::Segment {
  struct alignas(kLine) Counter {
    std::atomic<uint32_t> value;
  };
  uint64_t magic;
  uint32_t world_size;
  uint32_t reserved;
  uint64_t slot_bytes;
  uint64_t slots_offset;
  // Bumped on every post: the futex word waiters sleep on.
  alignas(kLine) std::atomic<uint32_t> wake;
  // Waiters asleep (or about to be): posters skip the wake call when none.
  alignas(kLine) std::atomic<uint32_t> sleepers;
  // 0, or 1 + the rank whose collective failed or that aborted.
  alignas(kLine) std::atomic<uint32_t> failed;
  Counter phase[1];  // world_size of them; the slots follow.

  static size_t HeaderBytes(int world) {
    return RoundUp(offsetof(Segment, phase) + sizeof(Counter) * world, kPage);
  }
};

static_assert(std::atomic<uint32_t>::is_always_lock_free,
              "shared-memory counters must be lock-free");

std::string SharedMemoryHostKey() {
  struct stat st {};
  std::string shm = "none";
  if (stat("/dev/shm", &st) == 0) {
    shm = absl::StrCat(st.st_dev, ":", st.st_ino);
  }
  char ns[128] = {};
  const ssize_t n = readlink("/proc/self/ns/ipc", ns, sizeof(ns) - 1);
  return absl::StrCat(ReadFirstLine("/proc/sys/kernel/random/boot_id"), "/",
                      shm, "/", n > 0 ? std::string(ns, n) : "ipc?", "/uid",
                      getuid());
}

absl::StatusOr<bool> AllRanksShareMemory(KvClient* kv, int rank, int world_size,
                                         absl::Duration timeout,
                                         int comm_index) {
  if (kv == nullptr) return absl::InvalidArgumentError("no kv client");
  const std::string prefix = absl::StrCat("shm/", comm_index, "/host/");
  const std::string mine = SharedMemoryHostKey();
  if (absl::Status s = kv->Set(absl::StrCat(prefix, rank), mine); !s.ok()) {
    return s;
  }
  std::vector<std::string> keys;
  for (int r = 0; r < world_size; ++r) keys.push_back(absl::StrCat(prefix, r));
  absl::StatusOr<std::vector<std::string>> all = kv->Wait(keys, timeout);
  if (!all.ok()) return all.status();
  for (const std::string& k : *all) {
    if (k != mine) return false;
  }
  return true;
}

ShmCommunicator::Mapping::~Mapping() {
  if (base != nullptr) munmap(base, bytes);
  if (fd >= 0) close(fd);  // Drops this rank's lock: peers see it gone.
}

namespace {

absl::Status CheckOptions(const ShmCommunicator::Options& options) {
  if (options.timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("shm timeout must be positive");
  }
  if (options.slot_bytes < kLine || options.slot_bytes % kLine != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "shm slot of ", options.slot_bytes, " bytes: want a multiple of 64"));
  }
  return absl::OkStatus();
}

// Rank 0: a new segment of `bytes` under a fresh *name, its pages reserved;
// *fd is set as soon as it is open (its owner closes it). *name is cleared
// again when nothing was created, so that there is nothing to unlink.
absl::Status CreateSegment(size_t bytes, std::string* name, int* fd) {
  absl::BitGen gen;
  *name = absl::StrFormat("/ringleader-%d-%016x", getpid(),
                          absl::Uniform<uint64_t>(gen));
  *fd = shm_open(name->c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (*fd < 0) {
    const absl::Status s = Errno(absl::StrCat("shm_open ", *name));
    name->clear();
    return s;
  }
  if (ftruncate(*fd, static_cast<off_t>(bytes)) != 0) {
    return Errno(absl::StrCat("sizing ", *name, " to ", bytes, " bytes"));
  }
  // Reserve the pages now: a /dev/shm without room fails here instead of
  // killing a process with SIGBUS on first touch.
  if (int e = posix_fallocate(*fd, 0, static_cast<off_t>(bytes)); e != 0) {
    errno = e;
    return Errno(absl::StrCat("reserving ", bytes, " bytes of /dev/shm"));
  }
  return absl::OkStatus();
}

// The other ranks: the segment rank 0 published under name_key, which must
// be `bytes` long; *fd is set as soon as it is open (its owner closes it).
absl::Status OpenPublishedSegment(KvClient* kv, const std::string& name_key,
                                  absl::Duration timeout, size_t bytes,
                                  int* fd) {
  absl::StatusOr<std::vector<std::string>> got = kv->Wait({name_key}, timeout);
  if (!got.ok()) return got.status();
  const std::string& published = (*got)[0];
  *fd = shm_open(published.c_str(), O_RDWR, 0600);
  if (*fd < 0) return Errno(absl::StrCat("shm_open ", published));
  struct stat st {};
  if (fstat(*fd, &st) != 0) return Errno("fstat of the segment");
  if (static_cast<size_t>(st.st_size) != bytes) {
    return absl::FailedPreconditionError(absl::StrCat(
        "segment ", published, " has ", st.st_size, " bytes, want ", bytes,
        ": ranks disagree on world size or slot size"));
  }
  return absl::OkStatus();
}

// This rank's liveness lock: byte `rank` of the file, held by this open
// file description until it is closed (or the process dies).
absl::Status LockRankByte(int fd, int rank) {
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  lock.l_start = rank;
  lock.l_len = 1;
  if (fcntl(fd, F_OFD_SETLK, &lock) != 0) {
    return Errno(absl::StrCat("locking rank ", rank, "'s byte"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<ShmCommunicator>> ShmCommunicator::Create(
    KvClient* kv, int rank, int world_size, Options options) {
  if (absl::Status s = CheckMembership(kv, rank, world_size); !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckOptions(options); !s.ok()) return s;
  const size_t slots_offset = Segment::HeaderBytes(world_size);
  const size_t bytes =
      slots_offset + 2 * static_cast<size_t>(world_size) * options.slot_bytes;
  const std::string name_key =
      absl::StrCat("shm/", options.comm_index, "/name");
  auto mapping = std::make_unique<Mapping>();
  std::string name;
  // Rank 0 unlinks the name however Create ends: once every rank mapped the
  // segment, or on failure (a late peer then fails to open it).
  struct Unlink {
    const std::string* name;
    bool owner;
    ~Unlink() {
      if (owner && !name->empty()) shm_unlink(name->c_str());
    }
  } unlink{&name, rank == 0};

  if (absl::Status s = rank == 0
                           ? CreateSegment(bytes, &name, &mapping->fd)
                           : OpenPublishedSegment(kv, name_key, options.timeout,
                                                  bytes, &mapping->fd);
      !s.ok()) {
    return s;
  }
  void* base =
      mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, mapping->fd, 0);
  if (base == MAP_FAILED) return Errno("mmap of the segment");
  mapping->base = base;
  mapping->bytes = bytes;
  auto* seg = static_cast<Segment*>(base);
  if (rank == 0) {
    // The file starts zeroed: counters at 0, no failure.
    seg->world_size = static_cast<uint32_t>(world_size);
    seg->slot_bytes = options.slot_bytes;
    seg->slots_offset = slots_offset;
    std::atomic_thread_fence(std::memory_order_release);
    seg->magic = kMagic;
    if (absl::Status s = kv->Set(name_key, name); !s.ok()) return s;
  } else if (seg->magic != kMagic ||
             seg->world_size != static_cast<uint32_t>(world_size) ||
             seg->slot_bytes != options.slot_bytes) {
    return absl::FailedPreconditionError(
        "shared segment does not match this rank's world size or slot size");
  }
  if (absl::Status s = LockRankByte(mapping->fd, rank); !s.ok()) return s;
  std::unique_ptr<ShmCommunicator> comm(
      new ShmCommunicator(std::move(mapping), rank, world_size, options));
  if (absl::Status s = comm->WaitAttached(); !s.ok()) return s;
  return comm;
}

ShmCommunicator::ShmCommunicator(std::unique_ptr<Mapping> mapping, int rank,
                                 int world_size, Options options)
    : mapping_(std::move(mapping)),
      seg_(static_cast<Segment*>(mapping_->base)),
      rank_(rank),
      world_size_(world_size),
      options_(std::move(options)),
      slice_inputs_(static_cast<size_t>(world_size)),
      slice_halves_(static_cast<size_t>(world_size)),
      queue_([this] { FailPeers(); }) {}

ShmCommunicator::~ShmCommunicator() {
  // A normal end is not a failure: peers are not told (the queue's own
  // abort ends anything still queued). A peer still waiting on this rank
  // sees its lock gone.
  aborted_.store(true);
  queue_.Abort();
  Futex(&seg_->wake, FUTEX_WAKE, INT_MAX, nullptr);
}

absl::Status ShmCommunicator::WaitAttached() {
  // Attach is phase 1; Create runs on the caller's thread before any
  // collective, so phase_ needs no queue here.
  seg_->phase[rank_].value.store(1);
  seg_->wake.fetch_add(1);
  if (seg_->sleepers.load() > 0) {
    Futex(&seg_->wake, FUTEX_WAKE, INT_MAX, nullptr);
  }
  return WaitAll(1, /*check_peers=*/false);
}

char* ShmCommunicator::Slot(uint64_t chunk, int rank) const {
  const size_t index = (chunk % 2) * world_size_ + rank;
  return static_cast<char*>(mapping_->base) + seg_->slots_offset +
         index * seg_->slot_bytes;
}

int ShmCommunicator::DeadPeer() const {
  for (int r = 0; r < world_size_; ++r) {
    if (r == rank_) continue;
    struct flock probe {};
    probe.l_type = F_WRLCK;
    probe.l_whence = SEEK_SET;
    probe.l_start = r;
    probe.l_len = 1;
    if (fcntl(mapping_->fd, F_OFD_GETLK, &probe) == 0 &&
        probe.l_type == F_UNLCK) {
      return r;
    }
  }
  return -1;
}

absl::Status ShmCommunicator::Step() {
  ++phase_;
  seg_->phase[rank_].value.store(phase_);
  seg_->wake.fetch_add(1);
  if (seg_->sleepers.load() > 0) {
    Futex(&seg_->wake, FUTEX_WAKE, INT_MAX, nullptr);
  }
  return WaitAll(phase_);
}

absl::Status ShmCommunicator::WaitAll(uint32_t phase, bool check_peers) {
  auto all_reached = [&] {
    for (int r = 0; r < world_size_; ++r) {
      if (!Reached(seg_->phase[r].value.load(), phase)) return false;
    }
    return true;
  };
  for (int i = 0; i < kSpins; ++i) {
    if (all_reached()) return absl::OkStatus();
    if (seg_->failed.load() != 0 || aborted_.load()) break;
    CpuRelax();
  }
  const absl::Time deadline = absl::Now() + options_.timeout;
  while (true) {
    // The order matters: read the futex word, announce the sleep, then look
    // once more. A post after the look changes the word (the wait returns at
    // once) or sees the sleeper and wakes it.
    const uint32_t word = seg_->wake.load();
    if (all_reached()) return absl::OkStatus();
    if (aborted_.load()) return absl::AbortedError("communicator aborted");
    if (const uint32_t f = seg_->failed.load(); f != 0) {
      return absl::UnavailableError(absl::StrCat(
          "rank ", f - 1, " failed or aborted its shared-memory collective"));
    }
    if (check_peers) {
      if (const int dead = DeadPeer(); dead >= 0) {
        return absl::UnavailableError(
            absl::StrCat("rank ", dead, " exited during a collective"));
      }
    }
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("shared-memory collective: peers did not arrive within ",
                       absl::FormatDuration(options_.timeout)));
    }
    seg_->sleepers.fetch_add(1);
    if (!all_reached()) {
      const struct timespec poll { 0, kPollNanos };
      Futex(&seg_->wake, FUTEX_WAIT, word, &poll);
    }
    seg_->sleepers.fetch_sub(1);
  }
}

void ShmCommunicator::FailPeers() noexcept {
  uint32_t none = 0;
  seg_->failed.compare_exchange_strong(none, static_cast<uint32_t>(rank_) + 1);
  seg_->wake.fetch_add(1);
  Futex(&seg_->wake, FUTEX_WAKE, INT_MAX, nullptr);
}

void ShmCommunicator::Abort() {
  aborted_.store(true);
  if (queue_.Abort()) FailPeers();
}

std::unique_ptr<Work> ShmCommunicator::AllReduceSumAsync(void* data,
                                                         size_t count,
                                                         DataType type) {
  return AllReduceSumAsyncThen(data, count, type, nullptr);
}

std::unique_ptr<Work> ShmCommunicator::AllReduceSumAsyncThen(
    void* data, size_t count, DataType type, std::function<void()> on_done) {
  if (std::optional<absl::Status> decided =
          AllReduceDecidedLocally(data, count)) {
    return ReadyWork(*std::move(decided), std::move(on_done));
  }
  if (DataTypeSize(type) == 0) {
    return ReadyWork(absl::InvalidArgumentError("unknown data type"),
                     std::move(on_done));
  }
  // The sum over one rank is the buffer itself: no copies.
  if (world_size_ == 1) {
    return ReadyWork(queue_.aborted()
                         ? absl::AbortedError("communicator aborted")
                         : absl::OkStatus(),
                     std::move(on_done));
  }
  return queue_.Enqueue(
      [this, data, count, type](int, uint32_t) {
        return AllReduceOnQueue(data, count, type);
      },
      std::move(on_done));
}

absl::Status ShmCommunicator::AllReduceOnQueue(void* data, size_t count,
                                               DataType type) {
  const size_t elem = DataTypeSize(type);
  const size_t per_chunk = seg_->slot_bytes / elem;
  char* const bytes = static_cast<char*>(data);
  // Rank r reduces slice r of each chunk, reading its own slice from its
  // data, not a copy. Memory traffic per rank at N=2, in chunks: the other
  // slice into the slot (1), the own slice summed (1.5) and copied into the
  // data from cache (1), the other sum copied back (1): 4.5, where copying
  // the whole chunk in and out was 5.5 (issue 37).
  for (size_t off = 0; off < count; off += per_chunk, ++chunk_) {
    const size_t n = std::min(per_chunk, count - off);
    char* const chunk = bytes + off * elem;
    const size_t lo = n * rank_ / world_size_;
    const size_t hi = n * (rank_ + 1) / world_size_;
    // The own slice of the slot is not read by anyone before this rank
    // writes its sum there.
    std::memcpy(Slot(chunk_, rank_), chunk, lo * elem);
    std::memcpy(Slot(chunk_, rank_) + hi * elem, chunk + hi * elem,
                (n - hi) * elem);
    if (absl::Status s = Step(); !s.ok()) return s;
    ReduceSlice(lo, hi, type, chunk);
    if (absl::Status s = Step(); !s.ok()) return s;
    // Every other slice from the rank that reduced it. The next chunk uses
    // the other set of slots, so no rank overwrites these before everyone
    // has copied them (it would have to pass this rank's next post first).
    for (int r = 0; r < world_size_; ++r) {
      if (r == rank_) continue;
      const size_t rlo = n * r / world_size_;
      const size_t rhi = n * (r + 1) / world_size_;
      std::memcpy(chunk + rlo * elem, Slot(chunk_, r) + rlo * elem,
                  (rhi - rlo) * elem);
    }
  }
  return absl::OkStatus();
}

void ShmCommunicator::ReduceSlice(size_t lo, size_t hi, DataType type,
                                  char* own) {
  if (hi == lo) return;
  const size_t elem = DataTypeSize(type);
  char* const out = Slot(chunk_, rank_) + lo * elem;
  for (int r = 0; r < world_size_; ++r) {
    slice_inputs_[r] =
        r == rank_ ? own + lo * elem : Slot(chunk_, r) + lo * elem;
  }
  // All ranks' values summed in rank order (16-bit ones in float32, rounded
  // once): every element is the same function of the ranks' values whichever
  // rank reduces its slice, so a sum never depends on how the buffer was cut
  // into chunks and slices, and a replay that adds the ranks' gradients in
  // rank order reproduces the all-reduce bit for bit.
  switch (type) {
    case DataType::kFloat32:
      SumInRankOrder<float>(out, slice_inputs_.data(), world_size_, hi - lo);
      break;
    case DataType::kFloat64:
      SumInRankOrder<double>(out, slice_inputs_.data(), world_size_, hi - lo);
      break;
    case DataType::kInt64:
      SumInRankOrder<int64_t>(out, slice_inputs_.data(), world_size_, hi - lo);
      break;
    case DataType::kFloat16:
    case DataType::kBFloat16: {
      for (int r = 0; r < world_size_; ++r) {
        slice_halves_[r] = reinterpret_cast<const uint16_t*>(slice_inputs_[r]);
      }
      SumFloat16RoundOnce(type == DataType::kFloat16 ? Float16Format::kFp16
                                                     : Float16Format::kBf16,
                          reinterpret_cast<uint16_t*>(out),
                          slice_halves_.data(), world_size_, hi - lo);
      break;
    }
  }
  // The sum into this rank's own data too: it need not come back.
  std::memcpy(own + lo * elem, out, (hi - lo) * elem);
}

absl::Status ShmCommunicator::Broadcast(void* data, size_t bytes, int root) {
  return BroadcastAsync(data, bytes, root)->Wait();
}

std::unique_ptr<Work> ShmCommunicator::BroadcastAsync(void* data, size_t bytes,
                                                      int root) {
  if (std::optional<absl::Status> decided =
          BroadcastDecidedLocally(data, bytes, root, world_size_)) {
    return ReadyWork(*std::move(decided));
  }
  return queue_.Enqueue(
      [this, data, bytes, root](int, uint32_t) {
        return BroadcastOnQueue(data, bytes, root);
      },
      nullptr);
}

absl::Status ShmCommunicator::BroadcastOnQueue(void* data, size_t bytes,
                                               int root) {
  char* const buf = static_cast<char*>(data);
  const size_t per_chunk = seg_->slot_bytes;
  for (size_t off = 0; off < bytes; off += per_chunk, ++chunk_) {
    const size_t n = std::min(per_chunk, bytes - off);
    if (rank_ == root) std::memcpy(Slot(chunk_, root), buf + off, n);
    if (absl::Status s = Step(); !s.ok()) return s;
    if (rank_ != root) std::memcpy(buf + off, Slot(chunk_, root), n);
  }
  return absl::OkStatus();
}

}  // namespace ringleader
