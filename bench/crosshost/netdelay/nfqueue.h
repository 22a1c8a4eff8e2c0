#ifndef RINGLEADER_BENCH_NETDELAY_NFQUEUE_H_
#define RINGLEADER_BENCH_NETDELAY_NFQUEUE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

struct nfgenmsg;
struct nfq_data;
struct nfq_handle;
struct nfq_q_handle;

namespace ringleader {

// One NFQUEUE bound through libnetfilter_queue: the kernel hands it the
// packets a packet-filter rule queues (`nft ... queue num N`), metadata only
// (no payload is copied), GSO packets whole; each waits in the kernel until
// this program gives its verdict. Needs CAP_NET_ADMIN in the network
// namespace and the kernel's nfnetlink_queue.
class NfQueue {
 public:
  // Called with each arriving packet's id, from Drain.
  using OnPacket = std::function<void(uint32_t id)>;

  // Binds queue `num`; the kernel holds at most `kernel_maxlen` packets
  // awaiting a verdict (more are dropped there).
  static absl::StatusOr<std::unique_ptr<NfQueue>> Open(uint16_t num,
                                                       uint32_t kernel_maxlen,
                                                       OnPacket on_packet);
  ~NfQueue();
  NfQueue(const NfQueue&) = delete;
  NfQueue& operator=(const NfQueue&) = delete;

  // The netlink socket (non-blocking): readable when packets arrived.
  int fd() const { return fd_; }

  // Reads every waiting message, calling on_packet for each packet. A
  // socket overrun (ENOBUFS: the kernel dropped notifications, the packets
  // themselves stay queued) is counted, not an error; AcceptUpTo releases
  // such packets with the next batch.
  absl::Status Drain();

  // Accepts every packet still awaiting a verdict whose id is at or before
  // `id` (one batch verdict).
  absl::Status AcceptUpTo(uint32_t id);
  absl::Status Drop(uint32_t id);

  uint64_t overruns() const { return overruns_; }

 private:
  NfQueue() = default;
  static int Callback(nfq_q_handle* qh, nfgenmsg* msg, nfq_data* data,
                      void* self);

  nfq_handle* handle_ = nullptr;
  nfq_q_handle* queue_ = nullptr;
  int fd_ = -1;
  OnPacket on_packet_;
  std::vector<char> buffer_;  // One read's messages.
  uint64_t overruns_ = 0;
};

}  // namespace ringleader

#endif  // RINGLEADER_BENCH_NETDELAY_NFQUEUE_H_
