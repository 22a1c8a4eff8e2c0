#include "fuzz/corpus_files.h"

#include <dirent.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace ringleader {

std::vector<std::string> CorpusFiles(const std::string& dir_path) {
  std::vector<std::string> files;
  DIR* dir = opendir(dir_path.c_str());
  if (dir == nullptr) return files;
  while (const dirent* e = readdir(dir)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") files.push_back(name);
  }
  closedir(dir);
  std::sort(files.begin(), files.end());
  return files;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace ringleader
