// npyio's native reader: a budget of bytes that buffers may hold at once, shared by threads
// (the remote reads' buffers, remote.h). TensorFlow-free, so that the fuzz driver races it.
#ifndef NPYIO_NATIVE_BUDGET_H_
#define NPYIO_NATIVE_BUDGET_H_

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <mutex>

namespace npyio {

class ByteBudget {
 public:
  explicit ByteBudget(size_t limit) : limit_(limit) {}
  ByteBudget(const ByteBudget&) = delete;
  ByteBudget& operator=(const ByteBudget&) = delete;

  // Waits until `bytes` fit beside what is held, then holds them; a request larger than the
  // whole limit waits until nothing is held and goes alone (else it would wait for ever).
  // Returns whether it had to wait.
  bool acquire(size_t bytes) {
    std::unique_lock<std::mutex> lock(mu_);
    const auto fits = [&] { return held_ == 0 || bytes <= limit_ - std::min(held_, limit_); };
    const bool waited = !fits();
    if (waited) freed_.wait(lock, fits);
    held_ += bytes;
    if (held_ > peak_) peak_ = held_;
    return waited;
  }

  void release(size_t bytes) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      held_ -= bytes;
    }
    freed_.notify_all();
  }

  size_t limit() const { return limit_; }
  size_t held() {
    std::lock_guard<std::mutex> lock(mu_);
    return held_;
  }
  size_t peak() {
    std::lock_guard<std::mutex> lock(mu_);
    return peak_;
  }

 private:
  std::mutex mu_;
  std::condition_variable freed_;
  const size_t limit_;
  size_t held_ = 0, peak_ = 0;
};

// Holds `bytes` of a budget for its scope.
class BudgetHold {
 public:
  BudgetHold(ByteBudget& budget, size_t bytes)
      : budget_(budget), bytes_(bytes), waited_(budget.acquire(bytes)) {}
  ~BudgetHold() { budget_.release(bytes_); }
  BudgetHold(const BudgetHold&) = delete;
  BudgetHold& operator=(const BudgetHold&) = delete;
  bool waited() const { return waited_; }

 private:
  ByteBudget& budget_;
  const size_t bytes_;
  const bool waited_;
};

}  // namespace npyio

#endif  // NPYIO_NATIVE_BUDGET_H_
