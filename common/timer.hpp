#pragma once
// Wall-clock timing for the per-phase numbers in the level table and the JSON report.
#include <chrono>

namespace amgsolve {

class Timer {
 public:
  Timer() : start_(Clock::now()) {}
  void restart() { start_ = Clock::now(); }
  double seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point start_;
};

}  // namespace amgsolve
