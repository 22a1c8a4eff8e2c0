#ifndef RINGLEADER_COMMON_LOGGING_H_
#define RINGLEADER_COMMON_LOGGING_H_

// LOG, VLOG and CHECK for translation units that include LibTorch's headers:
// include this instead of glog/logging.h there. Code that never includes
// LibTorch (coordinator, cli, common) keeps including glog/logging.h.
//
// c10/util/Logging.h takes its macros from glog when LibTorch was built with
// C10_USE_GLOG (Debian's 1.13), and otherwise defines its own in
// c10/util/logging_is_not_google_glog.h (pip and pytorch.org builds of
// torch 2.x), which clash with glog's in a unit that includes both.
// tools/libtorch_configure.bzl reads c10/macros/cmake_macros.h and defines
// RINGLEADER_C10_OWN_LOGGING on @libtorch//:torch in the second case, so
// here every unit that depends on LibTorch takes c10's macros.
//
// c10's own set, as read in pytorch/pytorch c10/util/
// logging_is_not_google_glog.h: LOG(n) with n one of INFO, WARNING, ERROR,
// FATAL (::c10::GLOG_##n), VLOG(n), LOG_IF, VLOG_IF, VLOG_IS_ON, CHECK,
// DCHECK, DLOG, CHECK_OP and TORCH_CHECK_EQ and its kin. It has no CHECK_EQ,
// PLOG, LOG_EVERY_N or LOG_FIRST_N: use only the first set in these units
// (tools/check_logging_includes.py checks it). Its messages below
// FLAGS_caffe2_log_level (ERROR by default, c10/util/Logging.cpp) are
// dropped; the worker calls c10::ShowLogInfoToStderr() at start
// (worker/torch_logging.h).
#if defined(RINGLEADER_C10_OWN_LOGGING)
#include <c10/util/Logging.h>
#else
#include "glog/logging.h"
#endif

#endif  // RINGLEADER_COMMON_LOGGING_H_
