// Issue 36 point 2 end to end, with real coordinator and worker processes:
// while ranks wait in a collective past the threshold (3x the median step
// time, at least 1 s), GetJob and `ringctl get` name the rank they wait
// for, its host and its phase, within 2 s of the threshold, and the line
// goes when the stall ends. Three real stalls:
//   (a) a rank SIGSTOPped mid-training: "no heartbeat for X s";
//   (b) a rank whose next image file blocks in open(): the file was
//       replaced by a FIFO that only that rank's shard reads (shuffle off:
//       rank r reads samples r, r + W, ...); "data loading";
//   (c) a rank busy in its model's forward: a TorchScript forward that,
//       only for a marker input that only that rank's shard holds, loops
//       until the test writes a file it reads; "forward".
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <torch/script.h>
#include <torch/torch.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/job_over.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/cluster.h"
#include "tests/testing/job_specs.h"
#include "tests/worker/data/image_test_files.h"
#include "worker/data/npy_header.h"

namespace ringleader::testing {
namespace {

using ::testing::ContainsRegex;

// How long a poll of GetJob waits for the line, and for it to go.
constexpr absl::Duration kNamedWithin = absl::Seconds(20);
constexpr absl::Duration kGoneWithin = absl::Seconds(30);

std::string Hostname() {
  char host[256] = {};
  ::gethostname(host, sizeof(host) - 1);
  return host;
}

// GetJob every 50 ms until `until` holds (that snapshot), or nullopt after
// `timeout` (or once the job is final).
std::optional<v1::Job> Poll(Cluster& cluster, const std::string& job_id,
                            absl::Duration timeout,
                            const std::function<bool(const v1::Job&)>& until) {
  const absl::Time deadline = absl::Now() + timeout;
  for (int i = 0; i < 100000 && absl::Now() < deadline; ++i) {
    absl::StatusOr<v1::Job> job = cluster.Get(job_id);
    if (job.ok() && until(*job)) return *job;
    if (job.ok() && IsJobOver(job->state())) return std::nullopt;
    absl::SleepFor(absl::Milliseconds(50));  // A poll's pace, not a sync.
  }
  return std::nullopt;
}

// The waiting line of `job` names `rank` in `phase` (and nothing else).
bool Names(const v1::Job& job, int rank, v1::WorkerPhase phase, bool silent) {
  return job.has_waiting_for() && job.waiting_for().rank() == rank &&
         job.waiting_for().phase() == phase &&
         (job.waiting_for().silent_ms() > 0) == silent;
}

// What every stall must show: named within 2 s of the threshold, with this
// host, and the same in `ringctl get`'s STALLED line.
void ExpectNamed(Cluster& cluster, const std::string& job_id,
                 const v1::Job& job, int rank, const std::string& words) {
  const v1::WaitingFor& w = job.waiting_for();
  EXPECT_GE(w.waited_ms(), w.threshold_ms());
  EXPECT_LE(w.waited_ms(), w.threshold_ms() + 2000)
      << "named " << w.waited_ms() - w.threshold_ms()
      << " ms after the threshold";
  EXPECT_GE(w.threshold_ms(), 1000);
  EXPECT_EQ(w.wait_phase(), v1::WORKER_PHASE_ALLREDUCE_WAIT);
  EXPECT_GE(w.waiting_ranks(), 1);
  EXPECT_EQ(w.host(), Hostname());
  auto get = RunProcess({RunfilePath("cli/ringctl"),
                         "--coordinator=" + cluster.target(), "get", job_id},
                        absl::Seconds(60));
  ASSERT_TRUE(get.ok()) << get.status();
  EXPECT_THAT(
      get->out,
      ContainsRegex(absl::StrCat(
          "STALLED +waiting [0-9]+\\.[0-9] s in all-reduce of step ", w.step(),
          " for rank ", rank, " \\(host ", Hostname(), "\\): ", words)))
      << get->out;
  std::cout << get->out;
}

// A TorchScript module with a [in, out] weight and `body` as forward,
// compiled from source here (no Python needed), saved as `path`.
void ScriptModel(const std::string& path, int64_t in, int64_t out,
                 const std::string& body) {
  torch::jit::Module m("stall");
  m.register_attribute("training", c10::BoolType::get(), true);
  m.register_parameter(
      "weight", (torch::randn({in, out}) * 0.01).requires_grad_(), false);
  m.define("def forward(self, x):\n" + body + "\n");
  m.save(path);
}

v1::JobSpec TwoRankSpec(const std::string& name) {
  v1::JobSpec s;
  s.set_name(name);
  s.mutable_model()->set_arch(v1::MODEL_ARCH_TORCHSCRIPT);
  s.mutable_optimizer()->set_kind(v1::OPTIMIZER_KIND_SGD);
  s.mutable_optimizer()->set_learning_rate(0.01);
  s.set_epochs(1);
  s.set_min_workers(2);
  s.set_max_workers(2);
  s.set_progress_every_steps(5);
  return s;
}

// Sends SIGCONT and SIGKILL to a stopped worker however the test ends.
struct KillOnExit {
  Subprocess* p;
  ~KillOnExit() {
    if (p == nullptr) return;
    p->Kill(SIGCONT);
    p->Kill(SIGKILL);
  }
};

TEST(WaitingForTest, AStoppedRankIsNamedWithNoHeartbeat) {
  // A lease long enough that the hung verdict (peers blocked, member
  // silent past its lease) does not end the generation under the test.
  auto cluster = Cluster::Start(
      "stopped",
      // Heartbeats every 100 ms: the stopped rank's last one was sent in
      // training, not in the rendezvous a fast start has just left.
      {"--lease_ms=15000", "--heartbeat_ms=100", "--silent_member_limit=60s"});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  v1::JobSpec s = MinimalJobSpec("stopped", 3, 3);
  s.mutable_dataset()->set_synthetic_train_size(60000);
  s.set_batch_size(16);
  s.set_progress_every_steps(5);
  auto job = (*cluster)->Submit(s);
  ASSERT_TRUE(job.ok()) << job.status();
  ASSERT_TRUE((*cluster)->StartWorkers(3, {"--max_jobs=1"}).ok());
  auto running = (*cluster)->WaitUntil(
      *job, [](const v1::Job& j) { return RunningAt(j, 3, 400); },
      absl::Minutes(3));
  ASSERT_TRUE(running.ok()) << running.status();
  ASSERT_EQ(running->state(), v1::JOB_STATE_RUNNING) << running->message();
  Subprocess* stopped = (*cluster)->workers()[2].get();
  std::string stopped_id;
  grpc::ClientContext ctx;
  v1::ListWorkersResponse workers;
  ASSERT_TRUE((*cluster)
                  ->users()
                  .ListWorkers(&ctx, v1::ListWorkersRequest(), &workers)
                  .ok());
  for (const v1::WorkerInfo& w : workers.workers()) {
    if (w.pid() == stopped->pid()) stopped_id = w.worker_id();
  }
  ASSERT_FALSE(stopped_id.empty());

  stopped->Kill(SIGSTOP);
  KillOnExit guard{stopped};
  const absl::Time stopped_at = absl::Now();
  std::optional<v1::Job> named =
      Poll(**cluster, *job, kNamedWithin, [&](const v1::Job& j) {
        return j.has_waiting_for() && j.waiting_for().silent_ms() > 0;
      });
  ASSERT_TRUE(named.has_value()) << "no rank named as silent";
  const absl::Duration after = absl::Now() - stopped_at;
  const v1::WaitingFor& w = named->waiting_for();
  EXPECT_EQ(w.worker_id(), stopped_id);
  // Every member heartbeats each second: silent after 2 s, a wait past the
  // 1 s floor within a step of the stop.
  EXPECT_LT(after, absl::Milliseconds(w.threshold_ms()) + absl::Seconds(3))
      << "named " << after << " after the stop";
  int rank = -1;
  for (const v1::RankProgress& r : named->progress().ranks()) {
    if (r.worker_id() == stopped_id) rank = r.rank();
  }
  EXPECT_EQ(w.rank(), rank);
  // Its heartbeats said what it was doing up to the stop.
  ExpectNamed(**cluster, *job, *named, w.rank(),
              "no heartbeat for [0-9.]+ s, last seen in (data loading|"
              "forward|backward|all-reduce wait|buffer sync|optimizer)\n");

  stopped->Kill(SIGCONT);
  std::optional<v1::Job> gone =
      Poll(**cluster, *job, kGoneWithin,
           [](const v1::Job& j) { return !j.has_waiting_for(); });
  ASSERT_TRUE(gone.has_value()) << "the line stayed after SIGCONT";
  EXPECT_EQ(gone->state(), v1::JOB_STATE_RUNNING) << gone->message();
  EXPECT_EQ(gone->restarts(), 0) << gone->message();
  guard.p = nullptr;
}

TEST(WaitingForTest, ARankWhoseImageFileBlocksIsNamedInDataLoading) {
  // 2 classes of 8x8 PNGs; sample i is read by rank i % 2 in its batch
  // (i / 2) / kBatch (shuffle off).
  constexpr int kImages = 400, kBatch = 2, kTarget = 2 * kBatch * 60 + 1;
  const std::string root = FreshDir("fifo-images");
  std::vector<std::string> files;
  for (int cls = 0; cls < 2; ++cls) {
    std::filesystem::create_directories(absl::StrCat(root, "/train/c", cls));
    std::filesystem::create_directories(absl::StrCat(root, "/test/c", cls));
  }
  // ImageFolder's order: class folders sorted, files sorted in each.
  for (int cls = 0; cls < 2; ++cls) {
    for (int i = 0; i < kImages / 2; ++i) {
      const std::string png = testing_files::EncodePng(
          8, 8, testing_files::ClassPicture(8, 8, cls, i));
      const std::string path =
          absl::StrFormat("%s/train/c%d/%05d.png", root, cls, i);
      std::ofstream(path, std::ios::binary) << png;
      files.push_back(path);
      if (i < 4) {
        std::ofstream(absl::StrFormat("%s/test/c%d/%05d.png", root, cls, i),
                      std::ios::binary)
            << png;
      }
    }
  }
  const std::string target = files[kTarget];
  const std::string fifo = root + "/target.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);

  auto cluster = Cluster::Start("fifo");
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  v1::JobSpec s = TwoRankSpec("fifo");
  ScriptModel(root + "/model.pt", 3 * 8 * 8, 2,
              "    return torch.mm(torch.flatten(x, 1), self.weight)");
  s.mutable_model()->set_torchscript_path(root + "/model.pt");
  v1::DatasetSpec& d = *s.mutable_dataset();
  d.set_format(v1::DATASET_FORMAT_IMAGE_FOLDER);
  d.set_train_root(root + "/train");
  d.set_test_root(root + "/test");
  d.mutable_image()->set_size(8);
  d.mutable_image()->set_resize_size(8);
  d.mutable_image()->set_no_random_crop(true);
  d.set_shuffle(false);
  // The FIFO reads as an empty file once opened: skipped, not fatal.
  d.set_skip_corrupt(true);
  s.mutable_task()->set_kind(v1::TASK_KIND_CLASSIFICATION);
  s.set_batch_size(kBatch);
  auto job = (*cluster)->Submit(s);
  ASSERT_TRUE(job.ok()) << job.status();
  ASSERT_TRUE((*cluster)->StartWorkers(2, {"--max_jobs=1"}).ok());
  // Every worker listed (and checked) the files before it joined: from
  // RUNNING on, the target is read only by its rank's loader, at step 61.
  auto running = (*cluster)->WaitUntil(
      *job, [](const v1::Job& j) { return j.state() == v1::JOB_STATE_RUNNING; },
      absl::Minutes(3));
  ASSERT_TRUE(running.ok()) << running.status();
  ASSERT_EQ(running->state(), v1::JOB_STATE_RUNNING) << running->message();
  ASSERT_EQ(std::rename(target.c_str(), (target + ".real").c_str()), 0);
  ASSERT_EQ(std::rename(fifo.c_str(), target.c_str()), 0);

  std::optional<v1::Job> named =
      Poll(**cluster, *job, kNamedWithin, [](const v1::Job& j) {
        return Names(j, kTarget % 2, v1::WORKER_PHASE_DATA_LOADING, false);
      });
  ASSERT_TRUE(named.has_value())
      << "rank " << kTarget % 2
      << " not named in data loading: " << (*cluster)->Get(*job)->DebugString();
  EXPECT_EQ(named->waiting_for().step(), (kTarget / 2) / kBatch + 1);
  ExpectNamed(**cluster, *job, *named, kTarget % 2, "data loading for");

  // The reader's open() returns once a writer opens the FIFO.
  const int fd = ::open(target.c_str(), O_WRONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ::close(fd);
  ASSERT_EQ(std::rename((target + ".real").c_str(), target.c_str()), 0);
  std::optional<v1::Job> gone =
      Poll(**cluster, *job, kGoneWithin,
           [](const v1::Job& j) { return !j.has_waiting_for(); });
  ASSERT_TRUE(gone.has_value()) << "the line stayed after the read";
  auto end = (*cluster)->WaitForEnd(*job, absl::Minutes(2));
  ASSERT_TRUE(end.ok()) << end.status();
  EXPECT_EQ(end->state(), v1::JOB_STATE_SUCCEEDED) << end->message();
  EXPECT_FALSE(end->has_waiting_for());
}

template <typename T>
void WriteNpy(const std::string& path, NpyDtype dtype,
              const std::vector<int64_t>& shape, const std::vector<T>& data) {
  std::ofstream out(path, std::ios::binary);
  out << FormatNpyHeader(dtype, shape);
  out.write(reinterpret_cast<const char*>(data.data()),
            static_cast<std::streamsize>(data.size() * sizeof(T)));
}

// A forward that, when its batch holds the marker (an input above 1000),
// stays in the forward until the float in `release` (a file it maps on each
// pass) is no longer 0; a linear layer on the clamped input otherwise. The
// test decides when the stall ends, whatever the machine's load.
std::string StallingForward(const std::string& release) {
  return absl::StrCat(
      "    if bool((x > 1000.0).any()):\n"
      "        n = 0\n"
      "        while n < 100000000 and bool(torch.from_file(\"",
      release,
      "\", True, 1)[0] == 0.0):\n"
      "            n += 1\n"
      "    return torch.mm(torch.clamp(x, -10.0, 10.0), self.weight)");
}

void WriteFloat(const std::string& path, float value) {
  std::ofstream out(path, std::ios::binary | std::ios::in | std::ios::out);
  out.write(reinterpret_cast<const char*>(&value), sizeof(value));
}

TEST(WaitingForTest, ARankBusyInItsForwardIsNamedInForward) {
  // 1200 samples of 4 features; sample i goes to rank i % 2, batch
  // (i / 2) / kBatch. Only the target holds the marker.
  constexpr int kSamples = 1200, kBatch = 4, kTarget = 2 * kBatch * 40;
  const std::string dir = FreshDir("slow-forward-data");
  std::vector<float> x(kSamples * 4);
  std::vector<int64_t> y(kSamples);
  for (int i = 0; i < kSamples; ++i) {
    for (int f = 0; f < 4; ++f) x[i * 4 + f] = ((i * 7 + f * 3) % 11) / 11.0f;
    y[i] = i % 2;
  }
  x[kTarget * 4] = 5000.0f;
  WriteNpy(dir + "/x.npy", NpyDtype::kFloat32, {kSamples, 4}, x);
  WriteNpy(dir + "/y.npy", NpyDtype::kInt64, {kSamples}, y);
  const std::string release = dir + "/release";
  std::ofstream(release, std::ios::binary) << std::string(4, '\0');
  ScriptModel(dir + "/model.pt", 4, 2, StallingForward(release));

  auto cluster = Cluster::Start("slow-forward");
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  v1::JobSpec s = TwoRankSpec("slow-forward");
  s.mutable_model()->set_torchscript_path(dir + "/model.pt");
  v1::DatasetSpec& d = *s.mutable_dataset();
  d.set_format(v1::DATASET_FORMAT_NPY);
  d.mutable_train()->add_inputs(dir + "/x.npy");
  d.mutable_train()->set_targets(dir + "/y.npy");
  d.set_shuffle(false);
  s.set_batch_size(kBatch);
  auto job = (*cluster)->Submit(s);
  ASSERT_TRUE(job.ok()) << job.status();
  ASSERT_TRUE((*cluster)->StartWorkers(2, {"--max_jobs=1"}).ok());
  std::optional<v1::Job> named =
      Poll(**cluster, *job, absl::Minutes(3), [](const v1::Job& j) {
        return Names(j, kTarget % 2, v1::WORKER_PHASE_FORWARD, false);
      });
  ASSERT_TRUE(named.has_value())
      << "rank " << kTarget % 2
      << " not named in its forward: " << (*cluster)->Get(*job)->DebugString()
      << "\n"
      << ReadFileOrEmpty((*cluster)->log_dir() + "/worker0.log");
  EXPECT_EQ(named->waiting_for().step(), (kTarget / 2) / kBatch + 1);
  ExpectNamed(**cluster, *job, *named, kTarget % 2, "forward for");
  // The forward ends: the wait with it.
  WriteFloat(release, 1.0f);
  std::optional<v1::Job> gone =
      Poll(**cluster, *job, kGoneWithin,
           [](const v1::Job& j) { return !j.has_waiting_for(); });
  ASSERT_TRUE(gone.has_value()) << "the line stayed after the forward";
  auto end = (*cluster)->WaitForEnd(*job, absl::Minutes(2));
  ASSERT_TRUE(end.ok()) << end.status();
  EXPECT_EQ(end->state(), v1::JOB_STATE_SUCCEEDED) << end->message();
}

}  // namespace
}  // namespace ringleader::testing
