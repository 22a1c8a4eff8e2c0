#ifndef RINGLEADER_WORKER_TORCH_THREADS_H_
#define RINGLEADER_WORKER_TORCH_THREADS_H_

#include <string>

// LibTorch's intra-op threads (n), one inter-op thread, and the BLAS's own
// pool (OpenBLAS, which Debian's LibTorch calls and which sizes its pool by
// the core count when it loads) to n too, unless $OPENBLAS_NUM_THREADS says
// otherwise. What it did, for the log. In a file of its own so that callers
// need not include torch/torch.h (slow to compile).
std::string SetTorchThreads(int n);

// OpenBLAS's pool alone (see above): for a process that has set LibTorch's
// threads already (its inter-op count can be set once only).
std::string SetBlasThreads(int n);

#endif  // RINGLEADER_WORKER_TORCH_THREADS_H_
