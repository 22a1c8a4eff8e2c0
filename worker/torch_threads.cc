// Kept apart from worker_main.cc so the daemon's main does not include
// torch/torch.h (slow to compile) for one call.
#include "worker/torch_threads.h"

#include <ATen/Parallel.h>
#include <dlfcn.h>

#include <cstdlib>

#include "absl/strings/str_cat.h"

// OpenBLAS's pool, where the BLAS LibTorch loaded is OpenBLAS (looked up,
// not linked: Debian's LibTorch links the generic libblas.so.3, which the
// alternatives system may point at another BLAS).
std::string SetBlasThreads(int n) {
  if (const char* env = std::getenv("OPENBLAS_NUM_THREADS")) {
    return absl::StrCat("OpenBLAS threads from $OPENBLAS_NUM_THREADS=", env);
  }
  using SetThreads = void (*)(int);
  auto set = reinterpret_cast<SetThreads>(
      ::dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
  if (set == nullptr) return "no OpenBLAS loaded";
  set(n);
  return absl::StrCat("OpenBLAS threads ", n);
}

std::string SetTorchThreads(int n) {
  at::set_num_threads(n);
  at::set_num_interop_threads(1);
  return absl::StrCat("LibTorch intra-op threads ", n, ", ", SetBlasThreads(n));
}
