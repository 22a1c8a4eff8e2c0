// Issue 35 end to end, with real coordinator and worker processes: the
// ResNet example from image files (an ImageFolder of JPEGs written from
// Fashion-MNIST by examples/resnet/prepare_images.py, and the same images as
// WebDataset tar shards) learns far above chance on 2 workers, with the
// class names kept with the job and exported beside the model; a worker
// killed mid-epoch and a resume still train every sample of every epoch
// exactly once; a bad file fails the job naming it, or, with skip_corrupt,
// is skipped and counted in `ringctl get`.
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/job_spec_io.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/cluster.h"
#include "tests/integration/worker_logs.h"
#include "tests/testing/numeric_bounds.h"

namespace ringleader::testing {
namespace {

using ::testing::HasSubstr;

constexpr char kPython[] = "/usr/bin/python3";
constexpr int kTrain = 3000;
constexpr int kTest = 500;

bool HavePython() {
  auto r = RunProcess({kPython, "-c", "import torch, numpy, PIL"},
                      absl::Seconds(60));
  return r.ok() && r->exit_code == 0 &&
         std::filesystem::exists("/usr/share/datasets/fashion-mnist");
}

// The images (and 3 training shards) and the model, once per test binary.
const std::string& Images() {
  static const std::string* dir = [] {
    auto* d = new std::string(FreshDir("images"));
    auto r = RunProcess(
        {kPython, RunfilePath("examples/resnet/prepare_images.py"), "--out", *d,
         "--limit-train", std::to_string(kTrain), "--limit-test",
         std::to_string(kTest), "--shards", "3", "--widths", "8,16,32"},
        absl::Minutes(5));
    EXPECT_TRUE(r.ok() && r->exit_code == 0)
        << (r.ok() ? r->err : r.status().ToString());
    return d;
  }();
  return *dir;
}

// The example's job file on this test's images, 3 epochs.
v1::JobSpec ExampleSpec(const std::string& name) {
  auto spec =
      LoadJobSpecFile(RunfilePath("examples/resnet_image_folder.textproto"));
  EXPECT_TRUE(spec.ok()) << spec.status();
  v1::JobSpec s = spec.ok() ? *spec : v1::JobSpec();
  const std::string& dir = Images();
  s.set_name(name);
  s.mutable_model()->set_torchscript_path(dir + "/model.pt");
  s.mutable_dataset()->set_train_root(dir + "/train");
  s.mutable_dataset()->set_test_root(dir + "/test");
  s.mutable_export_()->set_torchscript_path(
      absl::StrCat(FreshDir(name + "-out"), "/trained.pt"));
  s.mutable_export_()->clear_safetensors_path();
  s.set_epochs(3);
  s.set_seed(TrainingSeed(static_cast<int64_t>(s.seed())));
  return s;
}

v1::Job Train(const v1::JobSpec& spec, int workers = 2) {
  auto cluster = Cluster::Start(spec.name());
  EXPECT_TRUE(cluster.ok()) << cluster.status();
  if (!cluster.ok()) return v1::Job();
  auto job = (*cluster)->Submit(spec);
  EXPECT_TRUE(job.ok()) << job.status();
  if (!job.ok()) return v1::Job();
  EXPECT_TRUE((*cluster)->StartWorkers(workers, {"--max_jobs=1"}).ok());
  auto done = (*cluster)->WaitForEnd(*job, absl::Minutes(10));
  EXPECT_TRUE(done.ok()) << done.status();
  return done.ok() ? *done : v1::Job();
}

double Accuracy(const v1::Job& job) {
  for (const v1::Metric& m : job.progress().test_metrics()) {
    if (m.name() == "accuracy") return m.value();
  }
  return -1;
}

class ImageDataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HavePython()) {
      GTEST_SKIP()
          << "needs /usr/bin/python3 with python3-torch, "
             "python3-numpy and python3-pil, and dataset-fashion-mnist";
    }
  }
};

TEST_F(ImageDataTest, ImageFolderJobLearnsAndExportsTheClassNames) {
  const v1::JobSpec spec = ExampleSpec("image-folder");
  const v1::Job job = Train(spec);
  ASSERT_EQ(job.state(), v1::JOB_STATE_SUCCEEDED) << job.message();
  const double accuracy = Accuracy(job);
  std::cout << "ImageFolder: test accuracy " << accuracy << " (chance 0.1)\n";
  ReportNumeric("image_data.image_folder_test_accuracy", accuracy);
  EXPECT_GE(accuracy, 0.4);  // 0.53 here after 3 epochs of 3000 images.
  ASSERT_EQ(job.progress().class_names_size(), 10);
  EXPECT_EQ(job.progress().class_names(0), "0-T-shirt_top");
  EXPECT_EQ(job.progress().class_names(9), "9-Ankle_boot");
  const std::string path = spec.export_().torchscript_path();
  const std::string json =
      ReadFileOrEmpty(path.substr(0, path.size() - 3) + ".classes.json");
  EXPECT_THAT(json, HasSubstr("[\"0-T-shirt_top\", \"1-Trouser\""));
}

TEST_F(ImageDataTest, TarShardsJobLearns) {
  v1::JobSpec spec = ExampleSpec("tar-shards");
  v1::DatasetSpec* d = spec.mutable_dataset();
  d->clear_train_root();
  d->clear_test_root();
  d->set_format(v1::DATASET_FORMAT_TAR_SHARDS);
  d->add_train_shards(Images() + "/shards/train-{000000..000002}.tar");
  d->add_test_shards(Images() + "/shards/test-000000.tar");
  const v1::Job job = Train(spec);
  ASSERT_EQ(job.state(), v1::JOB_STATE_SUCCEEDED) << job.message();
  const double accuracy = Accuracy(job);
  std::cout << "tar shards: test accuracy " << accuracy << " (chance 0.1)\n";
  ReportNumeric("image_data.tar_shards_test_accuracy", accuracy);
  EXPECT_GE(accuracy, 0.4);  // 0.53 here after 3 epochs of 3000 images.
  EXPECT_EQ(job.progress().class_names_size(), 0);  // Shards carry ids only.
}

TEST_F(ImageDataTest, KilledWorkerAndResumeTrainEverySampleOnce) {
  // Workers log every batch's sample ids (VLOG 1); set before any thread.
  ASSERT_EQ(setenv("GLOG_v", "1", 1), 0);
  auto cluster =
      Cluster::Start("image-kill", {"--lease_ms=1000", "--heartbeat_ms=200"});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  v1::JobSpec spec = ExampleSpec("image-kill");
  spec.set_epochs(2);
  spec.set_min_workers(2);
  spec.set_max_workers(3);
  spec.set_max_restarts(2);
  spec.set_checkpoint_dir(FreshDir("image-kill-ckpt"));
  spec.set_checkpoint_every_steps(5);
  spec.set_rendezvous_last_call_ms(4000);
  // The training transform's random crops, drawn per sample, across the
  // world-size change.
  spec.mutable_dataset()->mutable_image()->set_no_random_crop(false);
  spec.mutable_dataset()->mutable_image()->set_min_scale(0.5);
  spec.mutable_dataset()->mutable_augmentation()->set_horizontal_flip(true);
  auto job = (*cluster)->Submit(spec);
  ASSERT_TRUE(job.ok()) << job.status();
  ASSERT_TRUE((*cluster)->StartWorkers(3, {"--max_jobs=1"}).ok());
  auto running = (*cluster)->WaitUntil(
      *job, [](const v1::Job& j) { return RunningAt(j, 3, 8); },
      absl::Minutes(3));
  ASSERT_TRUE(running.ok()) << running.status();
  (*cluster)->workers()[1]->Kill(SIGKILL);
  auto done = (*cluster)->WaitForEnd(*job, absl::Minutes(6));
  ASSERT_TRUE(done.ok()) << done.status();
  ASSERT_EQ(done->state(), v1::JOB_STATE_SUCCEEDED) << done->message();
  EXPECT_GE(done->restarts(), 1);
  std::vector<std::string> logs;
  for (int w = 0; w < 3; ++w) {
    logs.push_back(
        ReadFileOrEmpty(absl::StrCat((*cluster)->dir(), "/worker", w, ".log")));
  }
  const AppliedSamples applied = CountAppliedSamples(logs);
  EXPECT_EQ(applied.disagreement, "");
  ASSERT_EQ(applied.by_epoch.size(), 2u);
  for (const auto& [epoch, ids] : applied.by_epoch) {
    SCOPED_TRACE(epoch);
    // DistributedSampler pads each epoch to the world size: at most 2 more.
    EXPECT_GE(ids.size(), static_cast<size_t>(kTrain));
    EXPECT_LE(ids.size(), static_cast<size_t>(kTrain + 2));
    EXPECT_EQ(std::set<int64_t>(ids.begin(), ids.end()).size(),
              static_cast<size_t>(kTrain));
  }
  std::cout << "killed one of 3 workers after step 8; "
            << applied.redone_batches
            << " batches redone, every sample once per epoch\n";
}

// A copy of the test split with one bad file added to class 3.
std::string RootWithBadFile(const std::string& name) {
  const std::string root = FreshDir(name);
  std::filesystem::copy(Images() + "/test", root,
                        std::filesystem::copy_options::recursive);
  std::string cut = ReadFileOrEmpty(root + "/3-Dress/000003.jpg");
  if (cut.empty()) {  // Not a dress: any file of the class will do.
    for (const auto& e :
         std::filesystem::directory_iterator(root + "/3-Dress")) {
      cut = ReadFileOrEmpty(e.path());
      break;
    }
  }
  std::ofstream(root + "/3-Dress/zz-truncated.jpg", std::ios::binary)
      << cut.substr(0, cut.size() / 2);
  return root;
}

TEST_F(ImageDataTest, BadFileFailsTheJobNamingItOrIsCounted) {
  const std::string root = RootWithBadFile("bad-root");
  v1::JobSpec spec = ExampleSpec("bad-file");
  spec.mutable_dataset()->set_train_root(root);
  spec.mutable_dataset()->clear_test_root();
  spec.set_epochs(1);
  const v1::Job failed = Train(spec);
  EXPECT_EQ(failed.state(), v1::JOB_STATE_FAILED);
  EXPECT_THAT(failed.message(),
              HasSubstr(root + "/3-Dress/zz-truncated.jpg: a truncated JPEG"));
  EXPECT_EQ(failed.restarts(), 0) << "a bad file spends no restarts";

  spec.set_name("skip-file");
  spec.mutable_dataset()->set_skip_corrupt(true);
  auto cluster = Cluster::Start(spec.name());
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  auto job = (*cluster)->Submit(spec);
  ASSERT_TRUE(job.ok()) << job.status();
  ASSERT_TRUE((*cluster)->StartWorkers(2, {"--max_jobs=1"}).ok());
  auto done = (*cluster)->WaitForEnd(*job, absl::Minutes(5));
  ASSERT_TRUE(done.ok()) << done.status();
  ASSERT_EQ(done->state(), v1::JOB_STATE_SUCCEEDED) << done->message();
  EXPECT_EQ(done->progress().skipped_samples(), 1);
  auto get = RunProcess({RunfilePath("cli/ringctl"),
                         "--coordinator=" + (*cluster)->target(), "get", *job},
                        absl::Seconds(60));
  ASSERT_TRUE(get.ok()) << get.status();
  EXPECT_THAT(get->out, HasSubstr("1 unreadable samples (skip_corrupt)"));
  std::cout << get->out;
}

}  // namespace
}  // namespace ringleader::testing
