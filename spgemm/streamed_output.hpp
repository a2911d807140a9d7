#pragma once
// An output array of a SpGEMM (C's columns or values) written either directly or, where C is far
// larger than the caches, through a small staging buffer that is moved to C in whole cache lines with
// non-temporal stores. A regular store to a line of C that is not in cache first reads that line from
// memory (read for ownership), so writing a large C would otherwise cost twice its bytes of memory
// traffic; MAGNUS's bound (eq. (8)-(9)) counts them once.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace amgsolve {

// Makes the non-temporal stores of this thread visible to the others (they are weakly ordered).
inline void non_temporal_store_fence() {
#if defined(__x86_64__)
  _mm_sfence();
#endif
}

template <class T>
class StreamedArray {
 public:
  static constexpr std::size_t kLineBytes = 64;
  static constexpr std::size_t kPerLine = kLineBytes / sizeof(T);
  static constexpr std::size_t kFlushAt = 1024;  // staged entries; 4-8 KB, stays in L1

  // Each write between room() and commit() is of at most `most_per_write` entries. Without `streaming`
  // every row is written directly.
  StreamedArray(bool streaming, std::size_t most_per_write)
      : streaming_(streaming), buffer_(streaming ? kFlushAt + most_per_write : 0) {}

  // Entries go next to dst on, streamed or directly. Where a streamed row continues what is staged (the
  // next row of C, written by the same thread), staging goes on, so that rows shorter than a line still
  // leave whole lines.
  void start(T* dst, bool stream) {
    stream = stream && streaming_;
    if (stream && !direct_ && dst == dst_ + staged_) return;
    if (staged_ > 0) write_staged();
    dst_ = dst;
    direct_ = !stream;
  }
  // Where the next entries go (room for most_per_write of them).
  T* room() { return direct_ ? dst_ : buffer_.data() + staged_; }
  void commit(std::size_t count) {
    if (direct_) {
      dst_ += count;
      return;
    }
    staged_ += count;
    if (staged_ >= kFlushAt) flush_whole_lines();
  }
  void push(T value) {
    *room() = value;
    commit(1);
  }
  // Writes what is staged and makes the non-temporal stores visible: call before other threads read.
  void finish() {
    if (!streaming_) return;
    write_staged();
    non_temporal_store_fence();
  }
  std::size_t bytes() const { return buffer_.capacity() * sizeof(T); }

 private:
  // Regular stores up to C's next line boundary, non-temporal stores for whole lines, and the rest
  // (less than a line) kept staged.
  void flush_whole_lines() {
    const auto misalignment = reinterpret_cast<std::uintptr_t>(dst_) % kLineBytes;
    const std::size_t head = std::min(staged_, misalignment == 0 ? 0 : (kLineBytes - misalignment) / sizeof(T));
    const T* from = buffer_.data();
    dst_ = std::copy_n(from, head, dst_);
    from += head;
    const std::size_t lines = (staged_ - head) / kPerLine;
    stream_lines(from, lines);
    from += lines * kPerLine;
    const T* staged_end = buffer_.data() + staged_;
    staged_ = static_cast<std::size_t>(std::copy(from, staged_end, buffer_.data()) - buffer_.data());
  }

  // All staged entries: whole lines streamed, the rest (less than a line) with regular stores.
  void write_staged() {
    flush_whole_lines();
    dst_ = std::copy_n(buffer_.data(), staged_, dst_);
    staged_ = 0;
  }

  void stream_lines(const T* from, std::size_t lines) {
#if defined(__x86_64__)
    auto* to = reinterpret_cast<__m128i*>(dst_);
    const auto* source = reinterpret_cast<const __m128i*>(from);
    for (std::size_t q = 0; q < lines * (kLineBytes / 16); ++q) _mm_stream_si128(to + q, _mm_loadu_si128(source + q));
#else
    std::copy_n(from, lines * kPerLine, dst_);
#endif
    dst_ += lines * kPerLine;
  }

  bool streaming_;
  bool direct_ = true;  // the current row is written directly
  std::vector<T> buffer_;
  T* dst_ = nullptr;
  std::size_t staged_ = 0;
};

}  // namespace amgsolve
