#include "bench/crosshost/netdelay/nfqueue.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <libnetfilter_queue/libnetfilter_queue.h>
#include <linux/netfilter.h>
#include <sys/socket.h>

#include <cstring>

#include "absl/strings/str_cat.h"

namespace ringleader {
namespace {

// Room for many metadata-only messages per read.
constexpr size_t kReadBytes = 1 << 16;
// The socket's receive buffer: a burst of notifications waits here while
// the event loop releases packets.
constexpr int kSocketBufferBytes = 8 << 20;

absl::Status Errno(const std::string& what) {
  return absl::InternalError(absl::StrCat(what, ": ", std::strerror(errno)));
}

}  // namespace

absl::StatusOr<std::unique_ptr<NfQueue>> NfQueue::Open(uint16_t num,
                                                       uint32_t kernel_maxlen,
                                                       OnPacket on_packet) {
  std::unique_ptr<NfQueue> q(new NfQueue());
  q->on_packet_ = std::move(on_packet);
  q->buffer_.resize(kReadBytes);
  q->handle_ = nfq_open();
  if (q->handle_ == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot open nfnetlink (", std::strerror(errno),
                     "): netdelay needs root (CAP_NET_ADMIN) and the kernel's "
                     "nfnetlink_queue"));
  }
  q->queue_ = nfq_create_queue(q->handle_, num, &NfQueue::Callback, q.get());
  if (q->queue_ == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot bind NFQUEUE ", num, " (", std::strerror(errno),
        "): is another program bound to it in this network namespace?"));
  }
  if (nfq_set_mode(q->queue_, NFQNL_COPY_META, 0) < 0) {
    return Errno("nfq_set_mode(COPY_META)");
  }
  if (nfq_set_queue_maxlen(q->queue_, kernel_maxlen) < 0) {
    return Errno("nfq_set_queue_maxlen");
  }
  // Whole GSO packets, as the stack carries them: without this flag the
  // kernel cuts each into MTU-sized segments before queueing, which costs
  // CPU here and a notification per segment. Older kernels lack it.
  (void)nfq_set_queue_flags(q->queue_, NFQA_CFG_F_GSO, NFQA_CFG_F_GSO);
  nfnl_rcvbufsiz(nfq_nfnlh(q->handle_), kSocketBufferBytes);
  q->fd_ = nfq_fd(q->handle_);
  const int flags = fcntl(q->fd_, F_GETFL);
  if (flags < 0 || fcntl(q->fd_, F_SETFL, flags | O_NONBLOCK) < 0) {
    return Errno("fcntl(O_NONBLOCK)");
  }
  return q;
}

NfQueue::~NfQueue() {
  if (queue_ != nullptr) nfq_destroy_queue(queue_);
  if (handle_ != nullptr) nfq_close(handle_);
}

int NfQueue::Callback(nfq_q_handle*, nfgenmsg*, nfq_data* data, void* self) {
  const nfqnl_msg_packet_hdr* header = nfq_get_msg_packet_hdr(data);
  if (header != nullptr) {
    static_cast<NfQueue*>(self)->on_packet_(ntohl(header->packet_id));
  }
  return 0;
}

absl::Status NfQueue::Drain() {
  // Bounded: a flood cannot keep the loop from releasing packets.
  for (int reads = 0; reads < 1024; ++reads) {
    const ssize_t n = recv(fd_, buffer_.data(), buffer_.size(), MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return absl::OkStatus();
      if (errno == EINTR) continue;
      if (errno == ENOBUFS) {
        ++overruns_;
        continue;
      }
      return Errno("recv from nfnetlink");
    }
    if (n == 0) return absl::OkStatus();
    nfq_handle_packet(handle_, buffer_.data(), static_cast<int>(n));
  }
  return absl::OkStatus();
}

absl::Status NfQueue::AcceptUpTo(uint32_t id) {
  if (nfq_set_verdict_batch(queue_, id, NF_ACCEPT) < 0) {
    return Errno("batch verdict (accept)");
  }
  return absl::OkStatus();
}

absl::Status NfQueue::Drop(uint32_t id) {
  if (nfq_set_verdict(queue_, id, NF_DROP, 0, nullptr) < 0) {
    return Errno("verdict (drop)");
  }
  return absl::OkStatus();
}

}  // namespace ringleader
