// The fuzz targets' inputs replayed without libFuzzer: a main that hands each file named, and each file in each
// folder named, to LLVMFuzzerTestOneInput once, as libFuzzer does with -runs=0. The plain and the sanitized
// builds run every seed and every finding of fuzz/corpus/ so (ctest FuzzCorpus.*, label cpu), with gcc and
// without the clang build that fuzzing needs; scripts/fuzz searches for new inputs.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

std::vector<std::filesystem::path> inputs_in(const std::filesystem::path& named) {
  if (!std::filesystem::is_directory(named)) return {named};
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(named))
    if (entry.is_regular_file()) files.push_back(entry.path());
  return files;
}

bool replay(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "replay: cannot read %s\n", file.c_str());
    return false;
  }
  const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  // The bytes in a buffer of their own size, so that AddressSanitizer sees a read past the input's end.
  const std::vector<std::uint8_t> data(bytes.begin(), bytes.end());
  LLVMFuzzerTestOneInput(data.data(), data.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE_OR_FOLDER...\n", argv[0]);
    return 2;
  }
  static const std::uint8_t nothing[1] = {0};
  LLVMFuzzerTestOneInput(nothing, 0);  // the empty input, which libFuzzer tries first
  int replayed = 0;
  for (int i = 1; i < argc; ++i) {
    for (const std::filesystem::path& file : inputs_in(argv[i])) {
      if (!replay(file)) return 1;
      ++replayed;
    }
  }
  if (replayed == 0) {
    std::fprintf(stderr, "replay: no input found in the folders named\n");
    return 1;
  }
  std::printf("replay: %d inputs, no crash\n", replayed);
  return 0;
}
