#include "tests/worker/data/image_test_files.h"

#include <spng.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "jpeglib.h"
#include "tests/worker/data/test_files.h"

namespace ringleader {
namespace testing_files {

std::vector<uint8_t> ClassPicture(int width, int height, int cls, int seed) {
  std::vector<uint8_t> px(size_t{3} * width * height);
  uint32_t state = static_cast<uint32_t>(seed) * 2654435761u + 1;
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      for (int c = 0; c < 3; ++c) {
        state = state * 1664525u + 1013904223u;
        const double hue = std::sin(cls * 1.7 + c * 2.1) * 0.5 + 0.5;
        const double ramp = (x + y) / double(width + height);
        const double v = 40 + 150 * hue + 40 * ramp + (state >> 27);
        px[(size_t(y) * width + x) * 3 + c] =
            static_cast<uint8_t>(std::min(255.0, v));
      }
    }
  }
  return px;
}

std::string EncodeJpeg(int width, int height, const std::vector<uint8_t>& rgb,
                       bool progressive, bool grayscale) {
  jpeg_compress_struct info;
  jpeg_error_mgr err;
  info.err = jpeg_std_error(&err);
  jpeg_create_compress(&info);
  unsigned char* out = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&info, &out, &size);
  info.image_width = width;
  info.image_height = height;
  info.input_components = 3;
  info.in_color_space = JCS_RGB;
  jpeg_set_defaults(&info);
  if (grayscale) jpeg_set_colorspace(&info, JCS_GRAYSCALE);
  jpeg_set_quality(&info, 90, TRUE);
  if (progressive) jpeg_simple_progression(&info);
  jpeg_start_compress(&info, TRUE);
  while (info.next_scanline < info.image_height) {
    JSAMPROW row = const_cast<uint8_t*>(rgb.data()) +
                   size_t{3} * width * info.next_scanline;
    jpeg_write_scanlines(&info, &row, 1);
  }
  jpeg_finish_compress(&info);
  jpeg_destroy_compress(&info);
  std::string bytes(reinterpret_cast<char*>(out), size);
  std::free(out);
  return bytes;
}

std::string EncodePng(int width, int height, const std::vector<uint8_t>& rgb) {
  spng_ctx* enc = spng_ctx_new(SPNG_CTX_ENCODER);
  spng_set_option(enc, SPNG_ENCODE_TO_BUFFER, 1);
  spng_ihdr ihdr = {};
  ihdr.width = static_cast<uint32_t>(width);
  ihdr.height = static_cast<uint32_t>(height);
  ihdr.bit_depth = 8;
  ihdr.color_type = SPNG_COLOR_TYPE_TRUECOLOR;
  spng_set_ihdr(enc, &ihdr);
  spng_encode_image(enc, rgb.data(), rgb.size(), SPNG_FMT_PNG,
                    SPNG_ENCODE_FINALIZE);
  size_t size = 0;
  int error = 0;
  void* png = spng_get_png_buffer(enc, &size, &error);
  std::string bytes =
      png == nullptr ? "" : std::string(static_cast<char*>(png), size);
  std::free(png);
  spng_ctx_free(enc);
  return bytes;
}

std::string TarBytes(
    const std::vector<std::pair<std::string, std::string>>& members) {
  std::string out;
  for (const auto& [name, bytes] : members) {
    std::string h(512, '\0');
    name.copy(&h[0], std::min<size_t>(name.size(), 100));
    std::snprintf(&h[100], 8, "%07o", 0644);
    std::snprintf(&h[108], 8, "%07o", 0);
    std::snprintf(&h[116], 8, "%07o", 0);
    std::snprintf(&h[124], 12, "%011lo",
                  static_cast<unsigned long>(bytes.size()));
    std::snprintf(&h[136], 12, "%011o", 0);
    h[156] = '0';
    std::memcpy(&h[257], "ustar", 6);
    h[263] = '0';
    h[264] = '0';
    std::memset(&h[148], ' ', 8);
    unsigned sum = 0;
    for (unsigned char c : h) sum += c;
    std::snprintf(&h[148], 8, "%06o", sum);
    out += h;
    out += bytes;
    out.append((512 - bytes.size() % 512) % 512, '\0');
  }
  out.append(1024, '\0');
  return out;
}

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool RunPythonArgs(const std::string& script,
                   const std::vector<std::string>& args) {
  const std::string path = TempPath("image_script.py");
  WriteFile(path, script);
  std::vector<char*> argv = {const_cast<char*>("python3"),
                             const_cast<char*>(path.c_str())};
  for (const std::string& a : args)
    argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    execv("/usr/bin/python3", argv.data());
    _exit(127);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return false;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

bool HaveTorchvision(std::string& why) {
  if (access("/usr/bin/python3", X_OK) != 0) {
    why = "/usr/bin/python3 is not installed";
    return false;
  }
  if (!RunPythonArgs("import torchvision, PIL, numpy\n", {})) {
    why =
        "/usr/bin/python3 has no torchvision or PIL (scripts/setup.sh installs "
        "python3-torchvision and python3-pil)";
    return false;
  }
  return true;
}

}  // namespace testing_files
}  // namespace ringleader
