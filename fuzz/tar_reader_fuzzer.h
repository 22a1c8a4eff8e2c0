#ifndef RINGLEADER_FUZZ_TAR_READER_FUZZER_H_
#define RINGLEADER_FUZZ_TAR_READER_FUZZER_H_

#include <cstddef>
#include <cstdint>

// The libFuzzer entry point over the tar reader and the shard index
// (tar_reader_fuzzer.cc); scripts/fuzz.sh and tar_reader_corpus_test.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

#endif  // RINGLEADER_FUZZ_TAR_READER_FUZZER_H_
