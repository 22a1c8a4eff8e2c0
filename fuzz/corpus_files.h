#ifndef RINGLEADER_FUZZ_CORPUS_FILES_H_
#define RINGLEADER_FUZZ_CORPUS_FILES_H_

// What the corpus-replay tests share: the seed files of a corpus directory
// and their bytes. bazel test runs in the runfiles tree, where data files
// keep their workspace-relative paths ("fuzz/corpus/job_spec").

#include <string>
#include <vector>

namespace ringleader {

// The names of the files in `dir`, sorted; empty when it cannot be read.
std::vector<std::string> CorpusFiles(const std::string& dir);

// The bytes of the file at `path` (empty when it cannot be read).
std::string Slurp(const std::string& path);

}  // namespace ringleader

#endif  // RINGLEADER_FUZZ_CORPUS_FILES_H_
