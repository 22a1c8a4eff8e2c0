#ifndef RINGLEADER_WORKER_TORCH_THREADS_H_
#define RINGLEADER_WORKER_TORCH_THREADS_H_

// LibTorch's intra-op threads (n) and one inter-op thread. In a file of its
// own so that callers need not include torch/torch.h (slow to compile).
void SetTorchThreads(int n);

#endif  // RINGLEADER_WORKER_TORCH_THREADS_H_
