// The worker's image loader alone, for bench/training/image_bench.sh: an ImageFolder
// listed as a job lists it, decoded and transformed by a BatchLoader with N
// threads (what a rank's training loop consumes), over one epoch's shuffled
// permutation; prints one JSON line with the images per second.
//
//   ringleader-image-loader --root=DIR --threads=N [--batch=64] [--size=224]
//     [--resize=256] [--eval] [--epochs=1] [--full_decode]
#include <algorithm>
#include <cstdio>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "worker/data/batch_loader.h"
#include "worker/data/encoded_image_dataset.h"
#include "worker/data/image_folder.h"

ABSL_FLAG(std::string, root, "", "ImageFolder root");
ABSL_FLAG(int, threads, 1, "Loader threads");
ABSL_FLAG(int, batch, 64, "Batch size");
ABSL_FLAG(int, size, 224, "Crop size");
ABSL_FLAG(int, resize, 256, "Evaluation resize");
ABSL_FLAG(bool, eval, false,
          "Resize + CenterCrop instead of RandomResizedCrop");
ABSL_FLAG(int, epochs, 1, "Passes timed (each a new permutation and draws)");
ABSL_FLAG(bool, full_decode, false, "Never decode JPEGs at a reduced scale");

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  using namespace ringleader;
  auto samples = ImageFolderSamples::Open(absl::GetFlag(FLAGS_root), false);
  if (!samples.ok()) {
    std::fprintf(stderr, "%s\n", samples.status().ToString().c_str());
    return 1;
  }
  EncodedImageDataset::Options o;
  o.transform.size = absl::GetFlag(FLAGS_size);
  o.transform.resize_size = absl::GetFlag(FLAGS_resize);
  o.transform.random_crop = !absl::GetFlag(FLAGS_eval);
  o.transform.horizontal_flip = !absl::GetFlag(FLAGS_eval);
  o.transform.mean = {0.485, 0.456, 0.406};
  o.transform.std = {0.229, 0.224, 0.225};
  o.transform.reduced_decode = !absl::GetFlag(FLAGS_full_decode);
  o.seed = 1;
  auto ds = EncodedImageDataset::Create(
      std::shared_ptr<const EncodedSamples>(*std::move(samples)), o);
  if (!ds.ok()) return 1;
  std::vector<int64_t> order((*ds)->size());
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(7);
  int64_t images = 0;
  absl::Duration wait;
  const absl::Time start = absl::Now();
  for (int e = 0; e < absl::GetFlag(FLAGS_epochs); ++e) {
    std::shuffle(order.begin(), order.end(), rng);
    BatchLoaderOptions lo;
    lo.threads = absl::GetFlag(FLAGS_threads);
    lo.prefetch = std::max(4, lo.threads);
    lo.epoch = e;
    auto loader =
        BatchLoader::Create(**ds, order, absl::GetFlag(FLAGS_batch), lo);
    if (!loader.ok()) return 1;
    while (std::optional<Batch> b = (*loader)->Next()) images += b->size();
    if (!(*loader)->status().ok()) {
      std::fprintf(stderr, "%s\n", (*loader)->status().ToString().c_str());
      return 1;
    }
    wait += (*loader)->data_wait();
  }
  const double secs = absl::ToDoubleSeconds(absl::Now() - start);
  std::printf(
      "{\"impl\": \"ringleader\", \"threads\": %d, \"images\": %lld, "
      "\"seconds\": %.3f, \"images_per_sec\": %.1f}\n",
      absl::GetFlag(FLAGS_threads), static_cast<long long>(images), secs,
      images / secs);
  return 0;
}
