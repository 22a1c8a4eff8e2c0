#ifndef RINGLEADER_TESTS_TESTING_NETNS_H_
#define RINGLEADER_TESTS_TESTING_NETNS_H_

// Several "hosts" on one machine, for tests of what a network does to a
// cluster: each host is a Linux network namespace of its own with one veth
// link into a bridge that lives in a namespace of its own, addresses from
// the benchmarking range 198.18.0.0/15 (RFC 2544) inside the namespaces
// only, no default route, nothing attached to the root namespace. Commands
// run on a host through CommandPrefix, which also gives each a private
// /dev/shm (IPC and mount namespaces of its own), so that processes on two
// hosts share no memory either and talk over TCP as on two machines.
//
// Faults are nftables DROP rules in the bridge's namespace (bridge family,
// forward hook) on IPv4 frames: silent loss, as from a firewall, not a
// refused connection (ARP still resolves, so that healing does not wait on
// the kernel's neighbour-cache timers). Heal removes them.
//
// Namespaces are named "rlvn<pid>-<n>-<host>" after the test process that
// made them (n counts its networks), so tests run in parallel, and are deleted
// by the destructor; Create first deletes those of test processes that died
// without (a crash, a timeout's SIGKILL), with whatever they left running in
// them.
//
// Needs root in the machine's first user namespace (ip netns writes
// /run/netns): a Bazel test that uses it is tagged "no-sandbox". Supported()
// says why not where it cannot work. Not thread-safe.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace ringleader::testing {

class VirtualNetwork {
 public:
  // OK, or FailedPrecondition saying why virtual networks cannot be made
  // here (not root, iproute2/nftables/util-linux missing, or creating a
  // namespace, a bridge or an nftables table failing): the reason a test
  // skips with.
  static absl::Status Supported();

  // Hosts named `hosts` ([a-z0-9], 1..8 characters each, at most 200) at
  // 198.18.0.1, .2, ... in that order, joined by one bridge.
  static absl::StatusOr<std::unique_ptr<VirtualNetwork>> Create(
      const std::vector<std::string>& hosts);

  // Deletes every namespace (and kills what still runs in them).
  ~VirtualNetwork();
  VirtualNetwork(const VirtualNetwork&) = delete;
  VirtualNetwork& operator=(const VirtualNetwork&) = delete;

  // The host's IPv4 address ("198.18.0.N"); CHECK-fails on an unknown host.
  const std::string& Address(const std::string& host) const;
  // The host's network namespace name.
  std::string Namespace(const std::string& host) const;

  // An argv prefix that runs a program on `host`: prefix + {"/path/prog",
  // "--flag", ...}. The program (its pid is the prefix's, each step execs)
  // sees only the host's network and a private tmpfs at /dev/shm.
  std::vector<std::string> CommandPrefix(const std::string& host) const;

  // Drops every frame to and from `host`: it is cut off from everyone.
  absl::Status Isolate(const std::string& host);
  // Drops the frames `from` sends to `to` (one way; `to` still reaches
  // `from`, but a TCP connection from either side no longer completes).
  absl::Status DropFromTo(const std::string& from, const std::string& to);
  // Removes every drop rule; returns how many frames they dropped.
  absl::StatusOr<int64_t> Heal();

  // A TCP socket made inside `host`'s namespace and connected to
  // address:port (blocking, close-on-exec; the caller owns it). The socket
  // stays in that namespace: a process in the root namespace talks to a
  // host's local services through it (over the host's loopback, which no
  // fault touches). DeadlineExceeded when it does not connect in `timeout`.
  absl::StatusOr<int> ConnectTcp(const std::string& host,
                                 const std::string& address, int port,
                                 absl::Duration timeout) const;
  // A listening TCP socket inside `host`'s namespace on its address and a
  // free port: {fd, port}; the caller owns the fd.
  absl::StatusOr<std::pair<int, int>> ListenTcp(const std::string& host) const;

  // Deletes the namespaces named by this library for test processes that
  // are gone (killing what runs in them). Create calls it.
  static void RemoveStale();

 private:
  struct Host {
    std::string address;
    std::string bridge_port;  // The veth end in the bridge's namespace.
  };

  VirtualNetwork() = default;
  absl::Status AddHost(const std::string& name, int index);
  absl::Status AddRule(const std::vector<std::string>& match);

  std::string prefix_;  // "rlvn<pid>-"
  std::string bridge_ns_;
  std::map<std::string, Host> hosts_;
  std::vector<std::string> namespaces_;  // Every one made, to delete.
};

}  // namespace ringleader::testing

#endif  // RINGLEADER_TESTS_TESTING_NETNS_H_
