// npyio's native reader: a batch's files read on a pool of threads (read_pool.h).
#include "read_pool.h"

#include <sys/resource.h>
#include <time.h>

#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>

namespace npyio {
namespace {

// A range of units waited on storage where its thread read blocks from a device (getrusage's
// ru_inblock rose: a read the page cache serves never counts), or, for storage that counts none
// (a network or FUSE file system, a stalled read), where its wall time passed kWaitRatio times
// its thread's CPU time and kWaitFloorNs. The time rule alone tripped on warm reads whenever
// the machine was busy (a thread waiting for a core, not for storage), so its floor is above a
// scheduler's time slice (bench/README.md, "The batch source", has the measurements).
constexpr int64_t kWaitRatio = 3;
constexpr int64_t kWaitFloorNs = 10 * 1000 * 1000;

std::atomic<int64_t> live_threads{0};

// The blocks this thread has read from devices (0 where the count is not to be had).
int64_t blocks_in() {
  rusage usage{};
  return getrusage(RUSAGE_THREAD, &usage) == 0 ? usage.ru_inblock : 0;
}

int64_t now_ns(clockid_t clock) {
  timespec t{};
  clock_gettime(clock, &t);
  return int64_t{t.tv_sec} * 1000000000 + t.tv_nsec;
}

// A batch's ranges still running, and what runs when the last ends.
struct Completion {
  std::atomic<size_t> pending{0};
  std::function<void()> done;
};

struct Task {
  std::shared_ptr<BatchRead> batch;
  size_t begin = 0, end = 0;
  std::shared_ptr<Completion> completion;
};

}  // namespace

BatchRead::BatchRead(std::shared_ptr<const std::vector<PartPlan>> plan, size_t units,
                     std::shared_ptr<const void> keep, ReadFile read_file)
    : plan_(std::move(plan)),
      units_(units),
      keep_(std::move(keep)),
      read_file_(read_file),
      files_(units * plan_->size()) {}

bool BatchRead::Read(size_t begin, size_t end, const std::atomic<bool>& stop) {
  const int64_t wall = now_ns(CLOCK_MONOTONIC), cpu = now_ns(CLOCK_THREAD_CPUTIME_ID);
  const int64_t blocks = blocks_in();
  const size_t parts = plan_->size();
  for (size_t u = begin; u < end && u < units_; ++u) {
    for (size_t p = 0; p < parts; ++p) {
      if (stop.load(std::memory_order_relaxed)) return false;
      const PartPlan& plan = (*plan_)[p];
      FileRead& f = files_[u * parts + p];
      const bool good =
          !f.path.empty() &&
          read_file_(f.path.c_str(), reinterpret_cast<const uint8_t*>(plan.header.data()),
                     plan.header.size(), f.out, plan.payload, plan.check_bool) == ReadStatus::OK;
      if (f.ok != nullptr) *f.ok = good;
      if (!good && f.out != nullptr) std::memset(f.out, 0, plan.payload);
    }
  }
  if (blocks_in() > blocks) return true;
  const int64_t waited = now_ns(CLOCK_MONOTONIC) - wall;
  return waited > kWaitFloorNs && waited > kWaitRatio * (now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu);
}

struct ReadPool::State {
  std::mutex mu;
  std::condition_variable cond;
  std::deque<Task> queue;   // guarded by mu
  bool closed = false;      // guarded by mu
  int64_t in_here = 0;      // threads in ReadHere, guarded by mu
  int threads = 0;          // started
  std::atomic<bool> stop{false};  // closed, for the reads between files
  std::mutex done_mu;       // held while a `done` runs: Close waits for it
  std::atomic<int64_t> waiting{0};

  // A range ended: the last of its batch runs `done`, unless the pool closed first.
  void Ended(const Task& task, bool waited) {
    if (waited) waiting.store(kWaitingBatches, std::memory_order_relaxed);
    if (task.completion->pending.fetch_sub(1) != 1) return;
    std::lock_guard<std::mutex> lock(done_mu);
    if (!stop.load()) task.completion->done();
  }

  static void Work(std::shared_ptr<State> state) {
    while (true) {
      Task task;
      {
        std::unique_lock<std::mutex> lock(state->mu);
        state->cond.wait(lock, [&] { return state->closed || !state->queue.empty(); });
        if (state->closed) break;
        task = std::move(state->queue.front());
        state->queue.pop_front();
      }
      state->Ended(task, task.batch->Read(task.begin, task.end, state->stop));
    }
    live_threads.fetch_sub(1);
  }
};

ReadPool::ReadPool(int threads) : state_(std::make_shared<State>()) {
  for (int t = 0; t < threads; ++t) {
    live_threads.fetch_add(1);
    try {
      std::thread(State::Work, state_).detach();
      ++state_->threads;
    } catch (const std::system_error&) {  // no more threads: those started serve
      live_threads.fetch_sub(1);
      break;
    }
  }
}

ReadPool::~ReadPool() { Close(); }

void ReadPool::Submit(std::shared_ptr<BatchRead> batch, size_t tasks,
                      std::function<void()> done) {
  const size_t n = batch->units();
  tasks = std::max<size_t>(1, std::min(n, tasks));
  auto completion = std::make_shared<Completion>();
  completion->pending = tasks;
  completion->done = std::move(done);
  std::vector<Task> ranges;
  for (size_t t = 0; t < tasks; ++t) {
    ranges.push_back({batch, n * t / tasks, n * (t + 1) / tasks, completion});
  }
  if (state_->threads == 0) {  // no thread could start: read here, as ReadHere would
    for (const Task& task : ranges) state_->Ended(task, task.batch->Read(task.begin, task.end, state_->stop));
    return;
  }
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    if (state_->closed) return;
    for (Task& task : ranges) state_->queue.push_back(std::move(task));
  }
  state_->cond.notify_all();
}

bool ReadPool::ReadHere(const std::shared_ptr<BatchRead>& batch) {
  // Only the local copy is used after the read: the pool (this) may be gone by then.
  std::shared_ptr<State> state = state_;
  {
    std::lock_guard<std::mutex> lock(state->mu);
    if (state->closed) return false;
    ++state->in_here;
  }
  if (batch->Read(0, batch->units(), state->stop)) {
    state->waiting.store(kWaitingBatches, std::memory_order_relaxed);
  }
  std::lock_guard<std::mutex> lock(state->mu);
  --state->in_here;
  return !state->closed;
}

bool ReadPool::TakeWaiting() {
  int64_t left = state_->waiting.load(std::memory_order_relaxed);
  while (left > 0 && !state_->waiting.compare_exchange_weak(left, left - 1)) {
  }
  return left > 0;
}

bool ReadPool::Close() {
  std::deque<Task> dropped;  // destroyed here, outside the lock
  bool here_free = false;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->closed = true;
    state_->stop = true;
    dropped.swap(state_->queue);
    here_free = state_->in_here == 0;
  }
  state_->cond.notify_all();
  std::lock_guard<std::mutex> wait_for_done(state_->done_mu);
  return here_free;
}

int64_t ReadPool::LiveThreads() { return live_threads.load(); }

}  // namespace npyio
