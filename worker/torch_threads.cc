// Kept apart from worker_main.cc so the daemon's main does not include
// torch/torch.h (slow to compile) for one call.
#include "worker/torch_threads.h"

#include <ATen/Parallel.h>

void SetTorchThreads(int n) {
  at::set_num_threads(n);
  at::set_num_interop_threads(1);
}
