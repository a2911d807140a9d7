#pragma once
// Exceptions out of OpenMP parallel regions.
//
// An exception cannot leave a parallel region: the runtime calls std::terminate, which ends the process of a
// library or Python caller as well as the program's. A region whose work may throw (per-thread scratch sized
// by the problem, a caller's callback) runs that work through ThreadErrors::run: the first exception is kept,
// the threads skip the work left once one is (each still reaches the region's barriers, so none waits for
// ever), and rethrow() throws it after the region, where a caller can catch it: std::bad_alloc becomes the
// program's "out of memory" line and Python's MemoryError.
#include <atomic>
#include <exception>
#include <utility>

namespace amgsolve {

class ThreadErrors {
 public:
  // f(), unless an exception was kept already; one that f throws is kept (the first thread's to fail).
  // Whether f ran and returned: false tells a loop to skip the rest of its iteration.
  template <class F>
  bool run(F&& f) noexcept {
    if (failed()) return false;
    try {
      std::forward<F>(f)();
      return true;
    } catch (...) {
      if (!failed_.exchange(true)) first_ = std::current_exception();  // one writer; read after the region
      return false;
    }
  }
  // Whether an exception was kept: the work left can be skipped, since its result is thrown away.
  bool failed() const noexcept { return failed_.load(std::memory_order_relaxed); }
  // After the region (whose end orders every thread's writes before this): the kept exception, if any.
  void rethrow() const {
    if (failed_.load()) std::rethrow_exception(first_);
  }

 private:
  std::atomic<bool> failed_{false};
  std::exception_ptr first_;
};

}  // namespace amgsolve
