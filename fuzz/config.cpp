// libFuzzer target: the YAML config loader (config/config.hpp) with --set overrides. The input is the YAML
// text, then, after the first NUL byte if there is one, the overrides, one per line ("key.path=value"). A bad
// config must be an InputError naming the file or the --set argument, never a crash, a hang or a sanitizer
// report.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "config/config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const std::size_t nul = input.find('\0');
  const std::string yaml = input.substr(0, nul);
  std::vector<std::string> overrides;
  if (nul != std::string::npos) {
    std::istringstream lines(input.substr(nul + 1));
    for (std::string line; std::getline(lines, line);) overrides.push_back(line);
  }
  try {
    (void)amgsolve::parse_config(yaml, "fuzz.yaml", overrides);
  } catch (const amgsolve::InputError&) {
    // the expected answer to a bad config
  }
  return 0;
}
