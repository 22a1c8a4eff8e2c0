#include "worker/data/loader_settings.h"

#include <sched.h>

#include <algorithm>

namespace ringleader {

LoaderSettings LoaderSettingsFor(const v1::DatasetSpec& spec,
                                 int32_t host_ranks, int usable_cpus) {
  LoaderSettings s;
  s.threads = spec.loader_threads() > 0
                  ? spec.loader_threads()
                  : std::max(1, usable_cpus / std::max(1, host_ranks));
  s.threads = std::min(s.threads, 256);
  const bool images = spec.format() == v1::DATASET_FORMAT_IMAGE_FOLDER ||
                      spec.format() == v1::DATASET_FORMAT_TAR_SHARDS;
  s.prefetch =
      spec.prefetch_batches() > 0 ? spec.prefetch_batches() : (images ? 4 : 2);
  return s;
}

int UsableCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

}  // namespace ringleader
