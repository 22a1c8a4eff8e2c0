#ifndef RINGLEADER_WORKER_TORCH_LOGGING_H_
#define RINGLEADER_WORKER_TORCH_LOGGING_H_

// Shows LibTorch's LOG(INFO) and LOG(WARNING) on stderr, as glog's are with
// --logtostderr. Where c10 has its own logging (common/logging.h), the
// worker's LibTorch code logs through it, and it drops anything below ERROR
// unless told otherwise; where c10 logs through glog this only repeats
// FLAGS_logtostderr. Apart from worker_main.cc, which includes no LibTorch
// header.
void ShowTorchLogInfo();

// What a TorchScript model prints (print() in its code) becomes log lines,
// "model printed: ...", one per line, instead of going to stdout: so it
// reaches the job's log (worker/logs/) with the rank that printed it.
void LogModelPrints();

#endif  // RINGLEADER_WORKER_TORCH_LOGGING_H_
