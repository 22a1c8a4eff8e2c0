#include "tests/testing/netns.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <regex>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "tests/testing/process.h"

namespace ringleader::testing {
namespace {

constexpr char kPrefix[] = "rlvn";
constexpr char kNetnsDir[] = "/run/netns";
constexpr char kTable[] = "rlvn";
constexpr char kChain[] = "faults";
constexpr absl::Duration kCommandTimeout = absl::Seconds(30);

// The program's path: the usual system directories first (ip and nft are in
// sbin, which a test's PATH may lack), then $PATH; "" if none has it.
std::string FindTool(const std::string& name) {
  std::vector<std::string> dirs = {"/usr/sbin", "/sbin", "/usr/bin", "/bin"};
  if (const char* path = std::getenv("PATH"); path != nullptr) {
    for (absl::string_view d : absl::StrSplit(path, ':')) {
      if (!d.empty()) dirs.emplace_back(d);
    }
  }
  for (const std::string& d : dirs) {
    const std::string p = absl::StrCat(d, "/", name);
    if (access(p.c_str(), X_OK) == 0) return p;
  }
  return "";
}

struct Tools {
  std::string ip, nft, unshare, mount, sh;
};

const Tools& GetTools() {
  static const Tools* tools =
      new Tools{FindTool("ip"), FindTool("nft"), FindTool("unshare"),
                FindTool("mount"), FindTool("sh")};
  return *tools;
}

// Runs a command to completion; an error quoting it and its stderr unless
// it exits 0. Its stdout.
absl::StatusOr<std::string> Run(const std::vector<std::string>& argv) {
  absl::StatusOr<ProcessResult> r = RunProcess(argv, kCommandTimeout);
  if (!r.ok()) return r.status();
  if (r->exit_code != 0 || r->timed_out) {
    return absl::InternalError(absl::StrCat(
        "`", absl::StrJoin(argv, " "), "` ",
        r->timed_out ? "timed out" : absl::StrCat("exited ", r->exit_code),
        ": ", absl::StripAsciiWhitespace(r->err)));
  }
  return r->out;
}

absl::Status RunOk(const std::vector<std::string>& argv) {
  return Run(argv).status();
}

std::vector<std::string> Nft(const std::string& ns,
                             std::vector<std::string> args) {
  std::vector<std::string> argv = {GetTools().ip, "netns", "exec", ns,
                                   GetTools().nft};
  for (std::string& a : args) argv.push_back(std::move(a));
  return argv;
}

// SIGKILLs every process in namespace `ns` (what a test left running).
void KillProcessesIn(const std::string& ns) {
  absl::StatusOr<std::string> pids = Run({GetTools().ip, "netns", "pids", ns});
  if (!pids.ok()) return;
  for (absl::string_view p : absl::StrSplit(*pids, '\n')) {
    int pid = 0;
    if (absl::SimpleAtoi(absl::StripAsciiWhitespace(p), &pid) && pid > 1 &&
        pid != getpid()) {
      kill(pid, SIGKILL);
    }
  }
}

void DeleteNamespace(const std::string& ns) {
  KillProcessesIn(ns);
  if (absl::Status s = RunOk({GetTools().ip, "netns", "del", ns}); !s.ok()) {
    std::cerr << "VirtualNetwork: " << s.message() << "\n";
  }
}

bool ValidHostName(const std::string& name) {
  if (name.empty() || name.size() > 8) return false;
  for (char c : name) {
    if (!absl::ascii_islower(c) && !absl::ascii_isdigit(c)) return false;
  }
  return true;
}

// Runs `fn` on a thread of its own that has entered namespace `ns` (only
// that thread moves; sockets it makes stay in `ns`).
absl::Status RunInNamespace(const std::string& ns,
                            const std::function<absl::Status()>& fn) {
  absl::Status result;
  std::thread t([&] {
    const std::string path = absl::StrCat(kNetnsDir, "/", ns);
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      result = absl::NotFoundError(
          absl::StrCat("open ", path, ": ", std::strerror(errno)));
      return;
    }
    const int rc = setns(fd, CLONE_NEWNET);
    const int err = errno;
    close(fd);
    if (rc != 0) {
      result = absl::InternalError(
          absl::StrCat("setns ", path, ": ", std::strerror(err)));
      return;
    }
    result = fn();
  });
  t.join();
  return result;
}

absl::StatusOr<sockaddr_in> Ipv4(const std::string& address, int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  if (inet_pton(AF_INET, address.c_str(), &a.sin_addr) != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("not an IPv4 address: ", address));
  }
  return a;
}

// Connects `fd` to `to` within `timeout` and leaves it blocking.
absl::Status ConnectWithin(int fd, const sockaddr_in& to,
                           absl::Duration timeout) {
  const int flags = fcntl(fd, F_GETFL, 0);
  fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  if (connect(fd, reinterpret_cast<const sockaddr*>(&to), sizeof(to)) != 0 &&
      errno != EINPROGRESS) {
    return absl::UnavailableError(std::strerror(errno));
  }
  pollfd p{fd, POLLOUT, 0};
  const absl::Time deadline = absl::Now() + timeout;
  int n = 0;
  // Bounded by the deadline; EINTR retries until then.
  do {
    const int64_t left = absl::ToInt64Milliseconds(deadline - absl::Now());
    n = poll(&p, 1, static_cast<int>(std::max<int64_t>(left, 0)));
  } while (n < 0 && errno == EINTR);
  if (n == 0) {
    return absl::DeadlineExceededError(
        absl::StrCat("no connection within ", absl::FormatDuration(timeout)));
  }
  int err = 0;
  socklen_t len = sizeof(err);
  getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
  if (err != 0) return absl::UnavailableError(std::strerror(err));
  fcntl(fd, F_SETFL, flags);
  return absl::OkStatus();
}

}  // namespace

absl::Status VirtualNetwork::Supported() {
  if (geteuid() != 0) {
    return absl::FailedPreconditionError(
        "needs root (network namespaces, nftables)");
  }
  const Tools& t = GetTools();
  for (const auto& [tool, package] :
       std::vector<std::pair<std::string, std::string>>{
           {t.ip, "ip (apt-get install iproute2)"},
           {t.nft, "nft (apt-get install nftables)"},
           {t.unshare, "unshare (util-linux)"},
           {t.mount, "mount (util-linux)"},
           {t.sh, "sh"}}) {
    if (tool.empty()) {
      return absl::FailedPreconditionError(absl::StrCat("missing ", package));
    }
  }
  // What Create does, on a bridge alone.
  const std::string ns = absl::StrCat(kPrefix, getpid(), "-probe");
  absl::Status s = RunOk({t.ip, "netns", "add", ns});
  if (s.ok()) {
    s = RunOk({t.ip, "-n", ns, "link", "add", "br0", "type", "bridge"});
    if (s.ok()) s = RunOk(Nft(ns, {"add", "table", "bridge", kTable}));
    DeleteNamespace(ns);
  }
  if (!s.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot make network namespaces here (in Bazel's sandbox /run/netns "
        "is read-only: tag the test no-sandbox): ",
        s.message()));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<VirtualNetwork>> VirtualNetwork::Create(
    const std::vector<std::string>& hosts) {
  if (hosts.empty() || hosts.size() > 200) {
    return absl::InvalidArgumentError("1..200 hosts");
  }
  for (size_t i = 0; i < hosts.size(); ++i) {
    if (!ValidHostName(hosts[i])) {
      return absl::InvalidArgumentError(absl::StrCat(
          "host name \"", hosts[i], "\": [a-z0-9], 1..8 characters"));
    }
    if (std::find(hosts.begin(), hosts.begin() + i, hosts[i]) !=
        hosts.begin() + i) {
      return absl::InvalidArgumentError(
          absl::StrCat("host \"", hosts[i], "\" twice"));
    }
  }
  RemoveStale();
  std::unique_ptr<VirtualNetwork> net(new VirtualNetwork());
  // Unique per process and network: tests may make several.
  static int networks = 0;
  net->prefix_ = absl::StrCat(kPrefix, getpid(), "-", ++networks, "-");
  net->bridge_ns_ = net->prefix_ + "bridge";
  const std::string& ip = GetTools().ip;
  const std::string& br = net->bridge_ns_;
  if (absl::Status s = RunOk({ip, "netns", "add", br}); !s.ok()) return s;
  net->namespaces_.push_back(br);
  for (const std::vector<std::string>& argv :
       std::vector<std::vector<std::string>>{
           {ip, "-n", br, "link", "set", "lo", "up"},
           {ip, "-n", br, "link", "add", "br0", "type", "bridge"},
           {ip, "-n", br, "link", "set", "br0", "up"},
           Nft(br, {"add", "table", "bridge", kTable}),
           Nft(br, {"add", "chain", "bridge", kTable, kChain,
                    "{ type filter hook forward priority 0 ; policy accept ; "
                    "}"})}) {
    if (absl::Status s = RunOk(argv); !s.ok()) return s;
  }
  for (size_t i = 0; i < hosts.size(); ++i) {
    if (absl::Status s = net->AddHost(hosts[i], static_cast<int>(i) + 1);
        !s.ok()) {
      return s;
    }
  }
  return net;
}

absl::Status VirtualNetwork::AddHost(const std::string& name, int index) {
  const std::string& ip = GetTools().ip;
  const std::string ns = prefix_ + name;
  if (absl::Status s = RunOk({ip, "netns", "add", ns}); !s.ok()) return s;
  namespaces_.push_back(ns);
  Host host;
  host.address = absl::StrCat("198.18.0.", index);
  host.bridge_port = "v" + name;
  for (const std::vector<std::string>& argv :
       std::vector<std::vector<std::string>>{
           {ip, "-n", bridge_ns_, "link", "add", host.bridge_port, "type",
            "veth", "peer", "name", "eth0", "netns", ns},
           {ip, "-n", bridge_ns_, "link", "set", host.bridge_port, "master",
            "br0"},
           {ip, "-n", bridge_ns_, "link", "set", host.bridge_port, "up"},
           {ip, "-n", ns, "addr", "add", host.address + "/24", "dev", "eth0"},
           {ip, "-n", ns, "link", "set", "eth0", "up"},
           {ip, "-n", ns, "link", "set", "lo", "up"}}) {
    if (absl::Status s = RunOk(argv); !s.ok()) return s;
  }
  hosts_[name] = std::move(host);
  return absl::OkStatus();
}

VirtualNetwork::~VirtualNetwork() {
  for (auto it = namespaces_.rbegin(); it != namespaces_.rend(); ++it) {
    DeleteNamespace(*it);
  }
}

const std::string& VirtualNetwork::Address(const std::string& host) const {
  auto it = hosts_.find(host);
  if (it == hosts_.end()) {
    std::cerr << "VirtualNetwork: no host \"" << host << "\"\n";
    std::abort();
  }
  return it->second.address;
}

std::string VirtualNetwork::Namespace(const std::string& host) const {
  Address(host);  // Checks the host.
  return prefix_ + host;
}

std::vector<std::string> VirtualNetwork::CommandPrefix(
    const std::string& host) const {
  const Tools& t = GetTools();
  // sh mounts the tmpfs in the new mount namespace (private propagation: the
  // root namespace never sees it), then execs the program ($0) with its
  // arguments.
  return {t.ip,
          "netns",
          "exec",
          Namespace(host),
          t.unshare,
          "--ipc",
          "--mount",
          "--propagation",
          "private",
          "--",
          t.sh,
          "-c",
          absl::StrCat(t.mount,
                       " -t tmpfs -o size=64m,mode=1777 rlvn-shm /dev/shm && "
                       "exec \"$0\" \"$@\"")};
}

absl::Status VirtualNetwork::AddRule(const std::vector<std::string>& match) {
  // IPv4 frames only, as an IP packet filter drops: ARP still resolves, so
  // a heal does not leave neighbour entries failed (connects failing with
  // EHOSTUNREACH until the kernel's retry timers run out).
  std::vector<std::string> args = {"add",  "rule",  "bridge", kTable,
                                   kChain, "ether", "type",   "ip"};
  for (const std::string& m : match) args.push_back(m);
  args.push_back("counter");
  args.push_back("drop");
  return RunOk(Nft(bridge_ns_, args));
}

absl::Status VirtualNetwork::Isolate(const std::string& host) {
  const std::string port =
      hosts_.count(host) ? hosts_.at(host).bridge_port : "";
  if (port.empty()) return absl::NotFoundError("no host \"" + host + "\"");
  if (absl::Status s = AddRule({"iifname", port}); !s.ok()) return s;
  return AddRule({"oifname", port});
}

absl::Status VirtualNetwork::DropFromTo(const std::string& from,
                                        const std::string& to) {
  if (!hosts_.count(from) || !hosts_.count(to)) {
    return absl::NotFoundError(
        absl::StrCat("no host \"", hosts_.count(from) ? to : from, "\""));
  }
  return AddRule({"iifname", hosts_.at(from).bridge_port, "oifname",
                  hosts_.at(to).bridge_port});
}

absl::StatusOr<int64_t> VirtualNetwork::Heal() {
  absl::StatusOr<std::string> listing =
      Run(Nft(bridge_ns_, {"list", "chain", "bridge", kTable, kChain}));
  if (!listing.ok()) return listing.status();
  int64_t dropped = 0;
  const std::regex re("counter packets ([0-9]+)");
  for (std::sregex_iterator it(listing->begin(), listing->end(), re), end;
       it != end; ++it) {
    dropped += std::stoll((*it)[1]);
  }
  if (absl::Status s =
          RunOk(Nft(bridge_ns_, {"flush", "chain", "bridge", kTable, kChain}));
      !s.ok()) {
    return s;
  }
  return dropped;
}

absl::StatusOr<int> VirtualNetwork::ConnectTcp(const std::string& host,
                                               const std::string& address,
                                               int port,
                                               absl::Duration timeout) const {
  absl::StatusOr<sockaddr_in> to = Ipv4(address, port);
  if (!to.ok()) return to.status();
  int fd = -1;
  absl::Status s = RunInNamespace(Namespace(host), [&] {
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return absl::InternalError(std::strerror(errno));
    return ConnectWithin(fd, *to, timeout);
  });
  if (!s.ok()) {
    if (fd >= 0) close(fd);
    return absl::Status(
        s.code(), absl::StrCat("connect from ", host, " to ", address, ":",
                               port, ": ", s.message()));
  }
  return fd;
}

absl::StatusOr<std::pair<int, int>> VirtualNetwork::ListenTcp(
    const std::string& host) const {
  absl::StatusOr<sockaddr_in> at = Ipv4(Address(host), 0);
  if (!at.ok()) return at.status();
  int fd = -1, port = 0;
  absl::Status s = RunInNamespace(Namespace(host), [&] {
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return absl::InternalError(std::strerror(errno));
    sockaddr_in bound = *at;
    socklen_t len = sizeof(bound);
    if (bind(fd, reinterpret_cast<const sockaddr*>(&bound), len) != 0 ||
        listen(fd, 16) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len) != 0) {
      return absl::InternalError(std::strerror(errno));
    }
    port = ntohs(bound.sin_port);
    return absl::OkStatus();
  });
  if (!s.ok()) {
    if (fd >= 0) close(fd);
    return absl::Status(s.code(),
                        absl::StrCat("listen on ", host, ": ", s.message()));
  }
  return std::make_pair(fd, port);
}

void VirtualNetwork::RemoveStale() {
  DIR* dir = opendir(kNetnsDir);
  if (dir == nullptr) return;
  std::vector<std::string> stale;
  const std::regex re(absl::StrCat("^", kPrefix, "([0-9]+)-[a-z0-9-]+$"));
  // Bounded by the directory's entries.
  while (const dirent* e = readdir(dir)) {
    const std::string name = e->d_name;
    std::smatch m;
    int pid = 0;
    if (!std::regex_match(name, m, re) || !absl::SimpleAtoi(m[1].str(), &pid) ||
        pid == getpid()) {
      continue;
    }
    // ESRCH: no such process. A pid reused since keeps them until it ends.
    if (kill(pid, 0) != 0 && errno == ESRCH) stale.push_back(name);
  }
  closedir(dir);
  for (const std::string& ns : stale) {
    std::cerr << "VirtualNetwork: deleting " << ns
              << ", left by a test process that is gone\n";
    DeleteNamespace(ns);
  }
}

}  // namespace ringleader::testing
