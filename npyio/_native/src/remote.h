// npyio's native reader, its read of a path with a scheme (gs://, ram://, file://, ...):
// TensorFlow's own file systems (Env::Default()), one read per object, then the core's check
// (check_npy). Part of the op layer: the core (npy_read.h) stays TensorFlow-free.
#ifndef NPYIO_NATIVE_REMOTE_H_
#define NPYIO_NATIVE_REMOTE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "npy_read.h"

namespace npyio {

// The object `path` read whole, as `data` and `size` (its bytes stay valid until the next
// call or the object's end): OK when the file system gave exactly `expected` bytes. One
// NewRandomAccessFile and one Read of more than `expected` bytes and more than TensorFlow's
// 64 MiB GCS read block, so that the read bypasses that block (no zero fill), asks for no
// stat, and sees an object longer than expected. The buffer is allocated, not written: only
// the pages the read fills are touched; but it is address space, which a host with strict
// overcommit charges in full, so the bytes such buffers ask at once are bounded by the
// process's remote budget (remote_budget_bytes): a read waits for room. Where the allocation
// fails anyway, the read is counted (remote_stats) and made with a buffer of the object's own
// size instead (through TensorFlow's read block: slower on GCS, never wrong); only where that
// fails too is the object doubted, and counted.
class RemoteObject {
 public:
  RemoteObject() = default;
  ~RemoteObject();
  RemoteObject(const RemoteObject&) = delete;
  RemoteObject& operator=(const RemoteObject&) = delete;

  ReadStatus read(const std::string& path, size_t expected);
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  char* buffer_ = nullptr;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;

  void drop();
};

// What the process's remote reads did, for the op NpyioRemoteStats and the tests: reads made,
// reads that waited for the budget, bypass buffers that could not be allocated (read with a
// buffer of the object's size instead), objects doubted for want of any buffer, and the most
// bytes of buffers held at once (never above the budget, but for one object larger than it).
struct RemoteStats {
  int64_t reads, waits, bypass_failed, unallocated, peak_bytes, budget_bytes;
};
RemoteStats remote_stats();

// The remote budget: $NPYIO_REMOTE_BUFFER_MIB if set (MiB, at least 1); else, on a host with
// strict overcommit (vm.overcommit_memory 2), kStrictBudget; else room for every remote
// thread's bypass buffer, since address space that is never touched costs nothing there.
size_t remote_budget_bytes();

// The objects read at once through TensorFlow's file systems, by every op of the process.
constexpr int kRemoteThreads = 64;

// The least a read of an object asks for: one byte more than TensorFlow's default GCS read
// block (64 MiB), which a read of at most that size would allocate and zero-fill.
constexpr size_t kBlockBypass = (size_t{64} << 20) + 1;

// The budget under strict overcommit: 16 bypass buffers (a GiB) in flight.
constexpr size_t kStrictBudget = 16 * kBlockBypass;

}  // namespace npyio

#endif  // NPYIO_NATIVE_REMOTE_H_
