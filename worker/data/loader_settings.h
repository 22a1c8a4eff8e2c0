#ifndef RINGLEADER_WORKER_DATA_LOADER_SETTINGS_H_
#define RINGLEADER_WORKER_DATA_LOADER_SETTINGS_H_

// How many loader threads a rank runs and how far ahead they read
// (DatasetSpec.loader_threads and prefetch_batches, with their defaults).

#include <cstdint>

#include "ringleader/v1/job.pb.h"

namespace ringleader {

struct LoaderSettings {
  int threads = 1;
  int prefetch = 2;
};

// Threads: the spec's, else `usable_cpus` / `host_ranks` (the generation's
// ranks on this host; DataLoader's usual num_workers = cores per process),
// at least 1. Prefetch: the spec's, else 4 batches for the image formats
// (decoding is slow and uneven: some slack keeps every thread busy) and 2
// for the others, as before.
LoaderSettings LoaderSettingsFor(const v1::DatasetSpec& spec,
                                 int32_t host_ranks, int usable_cpus);

// The CPUs this process may run on (its affinity mask), at least 1.
int UsableCpus();

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_DATA_LOADER_SETTINGS_H_
