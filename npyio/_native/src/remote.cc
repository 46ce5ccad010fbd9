// npyio's native reader, its read of an object through TensorFlow's file systems (remote.h).
#include "remote.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "budget.h"
#include "tensorflow/core/platform/env.h"
#include "tensorflow/core/platform/file_system.h"
#include "tensorflow/core/platform/logging.h"

namespace npyio {

namespace {

std::atomic<int64_t> reads{0}, waits{0}, bypass_failed{0}, unallocated{0};

ByteBudget& budget() {
  static auto* b = new ByteBudget(remote_budget_bytes());
  return *b;
}

bool strict_overcommit() {
  std::ifstream mode("/proc/sys/vm/overcommit_memory");
  int value = 0;
  return (mode >> value) && value == 2;
}

// A failed allocation is said once per process (and counted each time, remote_stats).
void tell_once(size_t bytes) {
  static std::atomic<bool> told{false};
  if (!told.exchange(true)) {
    LOG(WARNING) << "npyio: a remote read could not allocate " << bytes
                 << " bytes of address space; reading with buffers of the objects' own size "
                    "(set NPYIO_REMOTE_BUFFER_MIB lower to bound what remote reads ask)";
  }
}

}  // namespace

size_t remote_budget_bytes() {
  const char* mib = std::getenv("NPYIO_REMOTE_BUFFER_MIB");
  if (mib != nullptr && *mib != '\0') {
    char* end = nullptr;
    const unsigned long long value = std::strtoull(mib, &end, 10);
    if (*end == '\0' && value >= 1 && value <= (SIZE_MAX >> 20)) {
      return static_cast<size_t>(value) << 20;
    }
  }
  return strict_overcommit() ? kStrictBudget : kRemoteThreads * kBlockBypass;
}

RemoteStats remote_stats() {
  ByteBudget& b = budget();
  return {reads.load(),
          waits.load(),
          bypass_failed.load(),
          unallocated.load(),
          static_cast<int64_t>(b.peak()),
          static_cast<int64_t>(b.limit())};
}

RemoteObject::~RemoteObject() { std::free(buffer_); }

void RemoteObject::drop() {
  std::free(buffer_);
  buffer_ = nullptr;
}

ReadStatus RemoteObject::read(const std::string& path, size_t expected) {
  data_ = nullptr;
  size_ = 0;
  drop();
  if (path.find('\0') != std::string::npos) return ReadStatus::OPEN_FAILED;
  if (expected >= SIZE_MAX - kBlockBypass) return ReadStatus::SIZE_MISMATCH;
  std::unique_ptr<tensorflow::RandomAccessFile> file;
  if (!tensorflow::Env::Default()->NewRandomAccessFile(path, &file).ok()) {
    return ReadStatus::OPEN_FAILED;
  }
  // One byte more than expected, so that an object longer than expected is seen; above the
  // GCS read block. malloc, not new[] of a value: the pages stay untouched (a large block is
  // mapped lazily) beyond what the read writes. Held within the budget until the buffer is
  // shrunk to the object (or freed) below.
  size_t n = expected + 1 > kBlockBypass ? expected + 1 : kBlockBypass;
  BudgetHold hold(budget(), n);
  ++reads;
  if (hold.waited()) ++waits;
  buffer_ = static_cast<char*>(std::malloc(n));
  if (buffer_ == nullptr && n > expected + 1) {
    ++bypass_failed;
    tell_once(n);
    n = expected + 1;
    buffer_ = static_cast<char*>(std::malloc(n));
  }
  if (buffer_ == nullptr) {
    ++unallocated;
    tell_once(n);
    return ReadStatus::READ_FAILED;
  }
  absl::string_view got;
  const absl::Status status = file->Read(0, n, &got, buffer_);
  // The end of the object within n bytes is OUT_OF_RANGE, with the bytes that exist.
  if ((!status.ok() && !absl::IsOutOfRange(status)) || got.size() != expected) {
    drop();  // a doubted object holds no buffer while the batch waits for the others
    if (!status.ok() && !absl::IsOutOfRange(status)) return ReadStatus::READ_FAILED;
    return got.size() < expected ? ReadStatus::SHORT_READ : ReadStatus::SIZE_MISMATCH;
  }
  // (a file system may answer with its own bytes rather than the scratch's)
  if (got.data() != buffer_ && expected > 0) std::memmove(buffer_, got.data(), expected);
  // give back the address space above the object: a batch holds its objects until they are
  // copied into the output (a large block shrinks in place, with no copy)
  char* smaller = static_cast<char*>(std::realloc(buffer_, expected + 1));
  if (smaller != nullptr) buffer_ = smaller;
  data_ = reinterpret_cast<const uint8_t*>(buffer_);
  size_ = expected;
  return ReadStatus::OK;
}

}  // namespace npyio
