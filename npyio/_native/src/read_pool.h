// npyio's native reader: a batch's files read on a pool of threads, TensorFlow-free, so that
// the fuzz driver races and cancels it under sanitizers (driver.cc, "pool").
//
// NpyioBatchDataset (batch_dataset.cc) fills a BatchRead per batch (each file's path and the
// slice of the batch it goes to) and hands it to the iterator's ReadPool, cut into ranges of
// units, or reads a small one in its own thread (ReadHere). The pool's threads are the reads in
// flight: sized for the storage, not for the cores.
//
// Close (the iterator deleted) never waits on a read: the queued ranges are dropped, no `done`
// runs once it has returned, and a thread stalled in a system call (a hung network file
// system) finishes that read alone, then exits. What such a read writes into stays alive: each
// BatchRead holds what its caller gave it to keep (the batch's tensors), and the plan (headers).
#ifndef NPYIO_NATIVE_READ_POOL_H_
#define NPYIO_NATIVE_READ_POOL_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "npy_read.h"

namespace npyio {

// What every file of a part holds, as the plan says: its header bytes and payload length, and
// whether its payload is bool (each byte 0 or 1).
struct PartPlan {
  std::string header;
  size_t payload = 0;
  bool check_bool = false;
};

// A file read: a path, its part, where the payload goes (null: a part with no bytes, or no
// room, so the file is doubted unread) and where its verdict goes (true where read whole).
struct FileRead {
  std::string path;  // "" where the caller doubts it (local_path)
  uint8_t* out = nullptr;
  bool* ok = nullptr;
};

// One batch's files, units × parts, unit-major: files[unit * parts + part].
class BatchRead {
 public:
  // The reader a file goes through: read_npy's arguments and result. The driver's fuzz mode
  // puts its own in front (stalls, failures); the op uses read_npy.
  using ReadFile = ReadStatus (*)(const char* path, const uint8_t* header, size_t header_len,
                                  uint8_t* out, size_t payload_len, bool check_bool);

  BatchRead(std::shared_ptr<const std::vector<PartPlan>> plan, size_t units,
            std::shared_ptr<const void> keep, ReadFile read_file = read_npy);

  size_t units() const { return units_; }
  size_t parts() const { return plan_->size(); }
  FileRead& file(size_t unit, size_t part) { return files_[unit * parts() + part]; }

  // Reads units [begin, end): each file into its slice, ok where read whole, its slice zeros
  // where doubted; stops before the next file once `stop` is set. Returns whether the reads
  // waited on storage: the thread read blocks from a device (a cold cache), or its wall time
  // passed kWaitRatio times its CPU time and kWaitFloorNs (a slow network file system).
  bool Read(size_t begin, size_t end, const std::atomic<bool>& stop);

 private:
  const std::shared_ptr<const std::vector<PartPlan>> plan_;
  const size_t units_;
  const std::shared_ptr<const void> keep_;  // alive while a read may write into it
  const ReadFile read_file_;
  std::vector<FileRead> files_;
};

class ReadPool {
 public:
  // Waiting mode, turned on by a range that waited (BatchRead::Read), lasts this many batches.
  static constexpr int64_t kWaitingBatches = 64;

  explicit ReadPool(int threads);
  ~ReadPool();  // Close()
  ReadPool(const ReadPool&) = delete;
  ReadPool& operator=(const ReadPool&) = delete;

  // Reads `batch` on the pool as `tasks` ranges of units (at most one a unit); `done` runs
  // once, in the thread that ends the last range, unless Close came first (then never).
  void Submit(std::shared_ptr<BatchRead> batch, size_t tasks, std::function<void()> done);

  // Reads `batch` in the calling thread (a batch too small to hand off). False where Close
  // came first or meanwhile: the caller's owner may be gone, so it must touch nothing of it.
  bool ReadHere(const std::shared_ptr<BatchRead>& batch);

  // Whether the next batch goes out in waiting mode; counts the mode's batches down.
  bool TakeWaiting();

  // Stops the pool: queued ranges are dropped, and no `done` runs once this has returned. It
  // waits for a running `done`, never for a read. Returns whether no thread was in ReadHere
  // (a false: that thread is stalled in a read, and will see ReadHere return false).
  bool Close();

  // Threads of every pool still running (stalled reads of closed pools included): the fuzz
  // driver's check that each exits once its read returns.
  static int64_t LiveThreads();

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace npyio

#endif  // NPYIO_NATIVE_READ_POOL_H_
