// The TensorFlow-free core of npyio's native reader (see npy_read.h).
#include "npy_read.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
#include <unordered_map>

namespace npyio {

const char* status_name(ReadStatus status) {
  switch (status) {
    case ReadStatus::OK: return "OK";
    case ReadStatus::OPEN_FAILED: return "OPEN_FAILED";
    case ReadStatus::NOT_REGULAR: return "NOT_REGULAR";
    case ReadStatus::SIZE_MISMATCH: return "SIZE_MISMATCH";
    case ReadStatus::SHORT_READ: return "SHORT_READ";
    case ReadStatus::READ_FAILED: return "READ_FAILED";
    case ReadStatus::HEADER_MISMATCH: return "HEADER_MISMATCH";
    case ReadStatus::BAD_BOOL: return "BAD_BOOL";
    case ReadStatus::CHANGED: return "CHANGED";
    case ReadStatus::BAD_WINDOW: return "BAD_WINDOW";
    case ReadStatus::NO_MEMORY: return "NO_MEMORY";
    case ReadStatus::OUTSIDE: return "OUTSIDE";
  }
  return "UNKNOWN";
}

namespace {

// Closes the descriptor on every return path.
class Fd {
 public:
  Fd() : fd_(-1) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  void set(int fd) { fd_ = fd; }

 private:
  int fd_;
};

// Reads header_len bytes into `head` and payload_len bytes into `out`, from byte `offset`, with
// as few preadv calls as the kernel allows (one, for a regular local file): short reads resume
// where they stopped, EINTR retries, and a 0-byte read before the end is SHORT_READ.
ReadStatus read_all(int fd, uint8_t* head, size_t header_len, uint8_t* out, size_t payload_len,
                    uint64_t offset = 0) {
  const size_t total = header_len + payload_len;
  size_t done = 0;
  while (done < total) {
    struct iovec iov[2];
    int n = 0;
    if (done < header_len) {
      iov[n++] = {head + done, header_len - done};
      if (payload_len > 0) iov[n++] = {out, payload_len};
    } else {
      iov[n++] = {out + (done - header_len), total - done};
    }
    ssize_t got = preadv(fd, iov, n, static_cast<off_t>(offset + done));
    if (got < 0) {
      if (errno == EINTR) continue;
      return ReadStatus::READ_FAILED;
    }
    if (got == 0) return ReadStatus::SHORT_READ;
    done += static_cast<size_t>(got);
  }
  return ReadStatus::OK;
}

bool bools_ok(const uint8_t* p, size_t n) {
  uint8_t any = 0;  // branch-free: OR of every byte's bits above the lowest
  for (size_t i = 0; i < n; ++i) any |= p[i];
  return (any & 0xFE) == 0;
}

bool same_file(const struct stat& a, const struct stat& b) {
  return a.st_size == b.st_size && a.st_ino == b.st_ino && a.st_dev == b.st_dev &&
         a.st_mtim.tv_sec == b.st_mtim.tv_sec && a.st_mtim.tv_nsec == b.st_mtim.tv_nsec;
}

// Room for a file's header bytes, to compare with the expected header: on the stack up to
// 4 KiB (every header numpy writes), on the heap beyond; data() is null if that failed.
class HeaderScratch {
 public:
  explicit HeaderScratch(size_t n) {
    if (n > sizeof(small_)) {
      big_.reset(new (std::nothrow) uint8_t[n]);
      data_ = big_.get();
    }
  }
  uint8_t* data() const { return data_; }

 private:
  uint8_t small_[4096];
  std::unique_ptr<uint8_t[]> big_;
  uint8_t* data_ = small_;
};

}  // namespace

// Opens `path` into `fd` and stats it into `st`: OK if it is a regular file. O_NONBLOCK:
// opening a FIFO with no writer must not wait for one.
ReadStatus open_regular(const char* path, Fd& fd, struct stat& st) {
  int raw;
  do {
    raw = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  } while (raw < 0 && errno == EINTR);
  if (raw < 0) return ReadStatus::OPEN_FAILED;
  fd.set(raw);
  if (fstat(fd.get(), &st) != 0) return ReadStatus::READ_FAILED;
  if (!S_ISREG(st.st_mode) || st.st_size < 0) return ReadStatus::NOT_REGULAR;
  return ReadStatus::OK;
}

// open_regular, and OK only for a file of exactly `size` bytes.
ReadStatus open_sized(const char* path, uint64_t size, Fd& fd, struct stat& st) {
  const ReadStatus status = open_regular(path, fd, st);
  if (status != ReadStatus::OK) return status;
  if (static_cast<uint64_t>(st.st_size) != size) return ReadStatus::SIZE_MISMATCH;
  return ReadStatus::OK;
}

bool has_scheme(std::string_view path) { return path.find("://") != std::string_view::npos; }

std::string local_path(std::string_view name) {
  if (name.find('\0') != std::string_view::npos || has_scheme(name)) return "";
  return std::string(name);
}

bool has_size(const char* path, size_t size) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode) && static_cast<size_t>(st.st_size) == size;
}

ReadStatus read_range(const char* path, uint64_t file_size, uint64_t offset, uint8_t* out,
                      size_t length) {
  return read_range_into(
      path, file_size, offset, length,
      [](size_t, void* given) { return static_cast<uint8_t*>(given); }, out);
}

ReadStatus read_range_into(const char* path, uint64_t file_size, uint64_t offset, size_t length,
                           Allocate allocate, void* context) {
  if (offset > file_size || length > file_size - offset) return ReadStatus::SIZE_MISMATCH;
  Fd fd;
  struct stat before;
  ReadStatus status = open_sized(path, file_size, fd, before);
  if (status != ReadStatus::OK) return status;
  uint8_t* out = allocate(length, context);
  if (out == nullptr && length > 0) return ReadStatus::NO_MEMORY;
  status = read_all(fd.get(), nullptr, 0, out, length, offset);
  if (status != ReadStatus::OK) return status;
  struct stat after;
  if (fstat(fd.get(), &after) != 0) return ReadStatus::READ_FAILED;
  if (!same_file(before, after)) return ReadStatus::CHANGED;
  return ReadStatus::OK;
}

ReadStatus read_npy(const char* path, const uint8_t* header, size_t header_len, uint8_t* out,
                    size_t payload_len, bool check_bool) {
  if (header_len > kMaxHeader) return ReadStatus::HEADER_MISMATCH;
  if (payload_len > SIZE_MAX - header_len) return ReadStatus::SIZE_MISMATCH;
  Fd fd;
  struct stat before;
  ReadStatus opened = open_sized(path, header_len + payload_len, fd, before);
  if (opened != ReadStatus::OK) return opened;
  HeaderScratch scratch(header_len);
  uint8_t* head = scratch.data();
  if (head == nullptr) return ReadStatus::READ_FAILED;
  ReadStatus status = read_all(fd.get(), head, header_len, out, payload_len);
  if (status != ReadStatus::OK) return status;
  if (std::memcmp(head, header, header_len) != 0) return ReadStatus::HEADER_MISMATCH;
  struct stat after;
  if (fstat(fd.get(), &after) != 0) return ReadStatus::READ_FAILED;
  if (!same_file(before, after)) return ReadStatus::CHANGED;
  if (check_bool && !bools_ok(out, payload_len)) return ReadStatus::BAD_BOOL;
  return ReadStatus::OK;
}

// --- read_npy_parsed ----------------------------------------------------------------------------
namespace {

// Whether a parsed header is what the caller wants (read_npy_parsed's `want`).
bool wanted(const NpyHeader& h, const Wanted& want) {
  static const uint16_t kOne = 1;
  const bool machine_little = *reinterpret_cast<const uint8_t*>(&kOne) == 1;
  if (std::strcmp(h.code, want.code) != 0 || h.fortran_order) return false;
  if (h.itemsize > 1 && h.little_endian != machine_little) return false;
  if (want.rank >= 0 && h.rank != want.rank) return false;
  for (int i = 0; want.rank >= 0 && i < h.rank; ++i) {
    if (want.dims[i] >= 0 && want.dims[i] != h.shape[i]) return false;
  }
  return true;
}

}  // namespace

// --- the header cache (npy_read.h's kHeaderCacheEntries) ---------------------------------------
namespace {

struct FileId {
  dev_t dev;
  ino_t ino;
  bool operator==(const FileId& o) const { return dev == o.dev && ino == o.ino; }
};

struct FileIdHash {
  size_t operator()(const FileId& id) const {
    return std::hash<uint64_t>()(static_cast<uint64_t>(id.ino) * 0x9E3779B97F4A7C15ULL ^
                                 static_cast<uint64_t>(id.dev));
  }
};

struct KeptHeader {
  off_t size;
  struct timespec mtime, ctime;
  NpyHeader header;
};

bool same_time(const struct timespec& a, const struct timespec& b) {
  return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

// Shards, each with its own lock: the reads of a batch's files, on several threads, rarely
// wait on each other's look-ups.
constexpr size_t kKeptShards = 16;
struct KeptShard {
  std::mutex mu;
  std::unordered_map<FileId, KeptHeader, FileIdHash> headers;
};
// Never destroyed: pool threads may still read while the process exits.
KeptShard* const kept = new KeptShard[kKeptShards];
std::atomic<uint64_t> headers_from_files{0};

KeptShard& shard_of(const FileId& id) { return kept[FileIdHash()(id) % kKeptShards]; }

// The header kept for the file `st` describes, if it has not changed since.
bool kept_header(const struct stat& st, NpyHeader* h) {
  const FileId id{st.st_dev, st.st_ino};
  KeptShard& shard = shard_of(id);
  std::lock_guard<std::mutex> lock(shard.mu);
  const auto it = shard.headers.find(id);
  if (it == shard.headers.end()) return false;
  const KeptHeader& k = it->second;
  if (k.size != st.st_size || !same_time(k.mtime, st.st_mtim) || !same_time(k.ctime, st.st_ctim)) {
    return false;
  }
  *h = k.header;
  return true;
}

// Keeps `h` for the file `st` describes, unless the file changed within the last second.
void keep_header(const struct stat& st, const NpyHeader& h) {
  struct timespec now;
  if (clock_gettime(CLOCK_REALTIME, &now) != 0) return;
  if (st.st_ctim.tv_sec >= now.tv_sec - 1 || st.st_mtim.tv_sec >= now.tv_sec - 1) return;
  const FileId id{st.st_dev, st.st_ino};
  KeptShard& shard = shard_of(id);
  std::lock_guard<std::mutex> lock(shard.mu);
  try {
    if (shard.headers.size() >= kHeaderCacheEntries / kKeptShards) shard.headers.clear();
    shard.headers[id] = KeptHeader{st.st_size, st.st_mtim, st.st_ctim, h};
  } catch (const std::bad_alloc&) {  // a cache that cannot grow only costs a read
  }
}

// The header text's length, which max_header_size bounds (the prefix: magic, version, length).
uint64_t header_text_bytes(const NpyHeader& h) {
  const uint64_t prefix = h.version == 1 ? 10 : 12;
  return h.data_offset > prefix ? h.data_offset - prefix : 0;
}

}  // namespace

// The bytes read first to parse a file's header.
constexpr size_t kHead = 256;

// Opens `path` (open_regular), reads and parses its header and checks it against `want`, and
// that the file is exactly the header plus its payload: OK with `fd` open, `before` its stat
// and `h` its header. `head_bytes` (if not null) gets the bytes read.
ReadStatus open_parsed(const char* path, const Wanted& want, Fd& fd, struct stat& before,
                       NpyHeader& h, uint64_t* head_bytes) {
  ReadStatus status = open_regular(path, fd, before);
  if (status != ReadStatus::OK) return status;
  const uint64_t size = static_cast<uint64_t>(before.st_size);
  if (size > want.max_file_size) return ReadStatus::SIZE_MISMATCH;
  if (head_bytes != nullptr) *head_bytes = 0;
  if (kept_header(before, &h)) {  // parsed before (under any max_header_size), and agreeing
    const bool fits = header_text_bytes(h) <= want.max_header_size;
    return fits && wanted(h, want) ? ReadStatus::OK : ReadStatus::HEADER_MISMATCH;
  }
  ++headers_from_files;
  // The head: 256 bytes hold the headers numpy writes for up to about a dozen dims (it pads
  // to 64; a window's reads that follow are often smaller than a page, so the head read
  // matters); a longer one is read whole, once its length field (within max_header_size and
  // the file) says how long.
  uint8_t small[kHead];
  const size_t first = size < sizeof(small) ? static_cast<size_t>(size) : sizeof(small);
  status = read_all(fd.get(), small, first, nullptr, 0);
  if (status != ReadStatus::OK) return status;
  if (head_bytes != nullptr) *head_bytes = first;
  HeaderStatus parsed = parse_header(small, first, want.max_header_size, &h);
  if (parsed == HeaderStatus::SHORT) {
    if (h.data_offset > size) return ReadStatus::HEADER_MISMATCH;  // the graph path words it
    std::unique_ptr<uint8_t[]> big(new (std::nothrow) uint8_t[h.data_offset]);
    if (big == nullptr) return ReadStatus::NO_MEMORY;
    status = read_all(fd.get(), big.get(), h.data_offset, nullptr, 0);
    if (status != ReadStatus::OK) return status;
    if (head_bytes != nullptr) *head_bytes += h.data_offset;
    parsed = parse_header(big.get(), h.data_offset, want.max_header_size, &h);
  }
  if (parsed != HeaderStatus::OK) return ReadStatus::HEADER_MISMATCH;
  // data_offset is at most 12 + 2**32 and the payload under 2**62: no overflow
  const bool agrees = h.data_offset + h.payload_bytes == size;
  if (agrees) keep_header(before, h);  // a header its file agrees with, wanted or not
  if (!wanted(h, want)) return ReadStatus::HEADER_MISMATCH;
  return agrees ? ReadStatus::OK : ReadStatus::SIZE_MISMATCH;
}

ReadStatus read_npy_parsed(const char* path, const Wanted& want, bool check_bool,
                           AllocateFor allocate, void* context, NpyHeader* header) {
  Fd fd;
  struct stat before;
  NpyHeader h;
  ReadStatus status = open_parsed(path, want, fd, before, h, nullptr);
  if (status != ReadStatus::OK) return status;
  uint8_t* out = allocate(h, context);
  if (out == nullptr && h.payload_bytes > 0) return ReadStatus::NO_MEMORY;
  status = read_all(fd.get(), nullptr, 0, out, h.payload_bytes, h.data_offset);
  if (status != ReadStatus::OK) return status;
  struct stat after;
  if (fstat(fd.get(), &after) != 0) return ReadStatus::READ_FAILED;
  if (!same_file(before, after)) return ReadStatus::CHANGED;
  if (check_bool && !bools_ok(out, h.payload_bytes)) return ReadStatus::BAD_BOOL;
  *header = h;
  return ReadStatus::OK;
}

// --- read_window ------------------------------------------------------------------------------
namespace {

#ifdef IOV_MAX
constexpr int kMaxIov = IOV_MAX;
#else
constexpr int kMaxIov = 1024;  // Linux's UIO_MAXIOV
#endif

// The product of n dims times `unit`, in int64: 0 if any dim is 0 (so no product that
// precedes it can overflow), false if it does not fit.
bool checked_product(const int64_t* dims, int n, int64_t unit, int64_t* product) {
  for (int i = 0; i < n; ++i) {
    if (dims[i] == 0) {
      *product = 0;
      return true;
    }
  }
  int64_t p = unit;
  for (int i = 0; i < n; ++i) {
    if (__builtin_mul_overflow(p, dims[i], &p)) return false;
  }
  *product = p;
  return true;
}

// Reads, from `offset`, into the n iovecs (which it consumes), resuming after a short read.
ReadStatus preadv_all(int fd, struct iovec* iov, int n, uint64_t offset) {
  while (n > 0) {
    ssize_t got = preadv(fd, iov, n, static_cast<off_t>(offset));
    if (got < 0) {
      if (errno == EINTR) continue;
      return ReadStatus::READ_FAILED;
    }
    if (got == 0) return ReadStatus::SHORT_READ;
    offset += static_cast<uint64_t>(got);
    size_t left = static_cast<size_t>(got);
    while (n > 0 && left >= iov->iov_len) {
      left -= iov->iov_len;
      ++iov;
      --n;
    }
    if (n > 0) {
      iov->iov_base = static_cast<uint8_t*>(iov->iov_base) + left;
      iov->iov_len -= left;
    }
  }
  return ReadStatus::OK;
}

// The window's intersection with the array as runs: contiguous both in the file and in `out`.
// Axes after `last` are whole (the window is the axis: start 0, window = shape), so a run is
// axis `last`'s extent times the whole axes' elements; the runs are the odometer over the
// axes before `last`, in increasing file order.
struct Runs {
  int rank;
  int last;  // -1: every axis is whole, one run
  int64_t lo[kMaxRank], hi[kMaxRank];
  int64_t file_stride[kMaxRank], out_stride[kMaxRank];  // in bytes
  int64_t run_bytes;
  bool empty;

  // Calls visit(file_offset, out_offset, run_bytes) per run (offsets from the payload's
  // start and out's). Checked arithmetic is not needed here: each offset is within the file's
  // or the window's size, which read_window checked to fit.
  template <typename F>
  void each(const int64_t* start, F visit) const {
    if (empty || run_bytes == 0) return;
    int64_t idx[kMaxRank];
    for (int j = 0; j < last; ++j) idx[j] = lo[j];
    while (true) {
      int64_t file = 0, out = 0;
      for (int j = 0; j < last; ++j) {
        file += idx[j] * file_stride[j];
        out += (idx[j] - start[j]) * out_stride[j];
      }
      if (last >= 0) {
        file += lo[last] * file_stride[last];
        out += (lo[last] - start[last]) * out_stride[last];
      }
      visit(file, out, run_bytes);
      int j = last - 1;
      for (; j >= 0 && ++idx[j] == hi[j]; --j) idx[j] = lo[j];
      if (j < 0) return;
    }
  }
};

std::atomic<size_t> bounce_held{0};
std::atomic<uint64_t> advised{0};

// Reads the n iovecs (total bytes) from `offset` only if the page cache holds them all
// (preadv2's RWF_NOWAIT): true where it did. False where any was not in memory (a cold file;
// what was read is read again), or where the question cannot be asked (no RWF_NOWAIT): the
// caller then reads as usual.
bool read_if_cached(int fd, const struct iovec* iov, int n, uint64_t offset, size_t total) {
#ifdef RWF_NOWAIT
  while (true) {
    const ssize_t got = preadv2(fd, iov, n, static_cast<off_t>(offset), RWF_NOWAIT);
    if (got >= 0) return static_cast<size_t>(got) == total;
    if (errno != EINTR) return false;
  }
#else
  (void)fd;
  (void)iov;
  (void)n;
  (void)offset;
  (void)total;
  return false;
#endif
}

// read_window's bounce buffer: allocated at its first use by a call, kept for the call's later
// flushes, freed when the call returns (a TF worker thread lives as long as the process, so a
// buffer per thread would never be given back). get() is null if the allocation failed.
class Bounce {
 public:
  Bounce() = default;
  ~Bounce() {
    if (data_) bounce_held -= kWindowBounce;
  }
  Bounce(const Bounce&) = delete;
  Bounce& operator=(const Bounce&) = delete;
  uint8_t* get() {
    if (!data_ && !failed_) {
      data_.reset(new (std::nothrow) uint8_t[kWindowBounce]);
      failed_ = !data_;
      if (data_) bounce_held += kWindowBounce;
    }
    return data_.get();
  }

 private:
  std::unique_ptr<uint8_t[]> data_;
  bool failed_ = false;
};

// Fills n elements of itemsize bytes with `fill` (zeros where it is null or all zero).
void fill_elements(uint8_t* out, int64_t n, size_t itemsize, const uint8_t* fill) {
  const size_t bytes = static_cast<size_t>(n) * itemsize;
  if (bytes == 0) return;  // out may be null then
  bool zero = true;
  for (size_t b = 0; fill != nullptr && b < itemsize; ++b) zero = zero && fill[b] == 0;
  if (zero) {
    std::memset(out, 0, bytes);
    return;
  }
  for (size_t at = 0; at < bytes; at += itemsize) std::memcpy(out + at, fill, itemsize);
}

}  // namespace

size_t bounce_bytes_held() { return bounce_held.load(); }

uint64_t windows_advised() { return advised.load(); }

uint64_t headers_read() { return headers_from_files.load(); }

namespace {

// read_window_parsed's body: the window's arithmetic and runs, with the file opened and its
// header read by open_head(fd, before, payload, &at, &requested): OK with `fd` open on a file
// whose `payload` bytes start at `at`, and `requested` the bytes it read (0: nothing opened).
template <typename OpenHead>
ReadStatus read_window_with(const int64_t* shape, const int64_t* start, const int64_t* window,
                            int rank, size_t itemsize, const uint8_t* fill, uint8_t* out,
                            bool check_bool, uint64_t* bytes_read, const OpenHead& open_head) {
  if (bytes_read != nullptr) *bytes_read = 0;
  if (rank < 0 || rank > kMaxRank || itemsize == 0 || itemsize > INT64_MAX) {
    return ReadStatus::BAD_WINDOW;
  }
  const auto unit = static_cast<int64_t>(itemsize);
  Runs runs;
  runs.rank = rank;
  runs.empty = false;
  for (int i = 0; i < rank; ++i) {
    int64_t end;
    if (shape[i] < 0 || window[i] < 0 || __builtin_add_overflow(start[i], window[i], &end)) {
      return ReadStatus::BAD_WINDOW;
    }
    runs.lo[i] = std::max<int64_t>(start[i], 0);
    runs.hi[i] = std::min(end, shape[i]);
    runs.empty = runs.empty || runs.lo[i] >= runs.hi[i];
  }
  int64_t payload, window_bytes;
  if (!checked_product(shape, rank, unit, &payload) ||
      !checked_product(window, rank, unit, &window_bytes)) {
    return ReadStatus::BAD_WINDOW;
  }
  // The runs' layout. With the intersection non-empty every dim is at least 1, so each
  // stride is at most the file's or the window's size: no overflow.
  runs.last = rank - 1;
  while (runs.last >= 0 && start[runs.last] == 0 && window[runs.last] == shape[runs.last]) {
    --runs.last;
  }
  int64_t file_stride = unit, out_stride = unit;
  for (int i = rank - 1; i >= 0 && !runs.empty; --i) {
    runs.file_stride[i] = file_stride;
    runs.out_stride[i] = out_stride;
    file_stride *= shape[i];
    out_stride *= window[i];
  }
  runs.run_bytes = runs.empty ? 0
                   : runs.last < 0
                       ? payload
                       : (runs.hi[runs.last] - runs.lo[runs.last]) * runs.file_stride[runs.last];
  bool whole = !runs.empty;  // the intersection is the whole window: nothing to fill
  for (int i = 0; i < rank && whole; ++i) {
    whole = runs.lo[i] == start[i] && runs.hi[i] == start[i] + window[i];
  }
  if (!whole) fill_elements(out, window_bytes / unit, itemsize, fill);

  Fd fd;
  struct stat before;
  uint64_t at = 0, requested = 0;  // where the payload starts, the bytes read
  ReadStatus status = open_head(fd, before, static_cast<uint64_t>(payload), &at, &requested);
  if (requested == 0 && status != ReadStatus::OK) return status;  // nothing read: not opened
  // Runs at most kWindowGap apart go into one call, each gap into the sink (whose bytes
  // nobody reads: every gap of this call may share it). A call with gaps and at most
  // kWindowBounce bytes is read whole into the call's bounce buffer by one preadv and its
  // runs copied out: the kernel copies one long range faster than hundreds of short iovecs
  // (bench/README.md, "Crops": 96^3 windows of 256^3 float32, rows of 384 bytes 640 apart).
  // The bytes asked of the file system are the same either way.
  uint8_t sink[kWindowGap];
  struct iovec iov[kMaxIov];
  int n = 0;
  bool gaps = false;
  uint64_t call_start = 0, call_end = 0;  // the current call's file range
  Bounce bounce;
  // A cold file: each call below would wait for the disk in turn. So the first call is read
  // only if the page cache holds it (RWF_NOWAIT: a warm file pays nothing more); where it does
  // not, every call's range (merged kAdviseGap apart) is advised first (POSIX_FADV_WILLNEED)
  // and the disk reads them queued (bench/README.md, "Crops of per-case shapes", cold).
  // Advice reads nothing into `out` and asks no bytes of read().
  bool first_call = true;
  auto advise_all = [&]() {
    ++advised;
    uint64_t lo = 0, hi = 0;
    auto advise = [&]() {
      if (hi > lo) {
        posix_fadvise(fd.get(), static_cast<off_t>(at + lo), static_cast<off_t>(hi - lo),
                      POSIX_FADV_WILLNEED);
      }
    };
    runs.each(start, [&](int64_t file, int64_t, int64_t bytes) {
      const auto offset = static_cast<uint64_t>(file);
      if (hi > lo && offset - hi > kAdviseGap) {
        advise();
        lo = hi;
      }
      if (hi == lo) lo = offset;
      hi = offset + static_cast<uint64_t>(bytes);
    });
    advise();
  };
  // Reads the call (iovecs v, total bytes) at `offset`: the first one only from memory, or
  // after advising the window (above).
  auto read_call = [&](struct iovec* v, int count, uint64_t offset, uint64_t total) {
    if (first_call) {
      first_call = false;
      if (read_if_cached(fd.get(), v, count, offset, static_cast<size_t>(total))) {
        return ReadStatus::OK;
      }
      advise_all();
    }
    return preadv_all(fd.get(), v, count, offset);
  };
  auto flush = [&]() {
    if (n > 0 && status == ReadStatus::OK) {
      const uint64_t span = call_end - call_start;
      requested += span;
      if (gaps && bounce.get()) {  // else (out of memory) straight into out, as without gaps
        struct iovec whole = {bounce.get(), static_cast<size_t>(span)};
        status = read_call(&whole, 1, at + call_start, span);
        size_t at = 0;
        for (int i = 0; i < n && status == ReadStatus::OK; at += iov[i++].iov_len) {
          if (iov[i].iov_base != sink) {
            std::memcpy(iov[i].iov_base, bounce.get() + at, iov[i].iov_len);
          }
        }
      } else {
        status = read_call(iov, n, at + call_start, span);
      }
    }
    n = 0;
    gaps = false;
  };
  if (status == ReadStatus::OK) {
    runs.each(start, [&](int64_t file, int64_t at, int64_t bytes) {
      const auto offset = static_cast<uint64_t>(file);
      const uint64_t gap = offset - call_end;
      // (a call with gaps stays within the bounce buffer)
      const uint64_t span = offset + static_cast<uint64_t>(bytes) - call_start;
      if (n > 0 && (gap > kWindowGap || n + 2 > kMaxIov ||
                    ((gaps || gap > 0) && span > kWindowBounce))) {
        flush();
      }
      if (n == 0) {
        call_start = offset;
      } else if (gap > 0) {
        iov[n++] = {sink, static_cast<size_t>(gap)};
        gaps = true;
      }
      iov[n++] = {out + at, static_cast<size_t>(bytes)};
      call_end = offset + static_cast<uint64_t>(bytes);
    });
    flush();
  }
  if (bytes_read != nullptr) *bytes_read = requested;
  if (status != ReadStatus::OK) return status;
  struct stat after;
  if (fstat(fd.get(), &after) != 0) return ReadStatus::READ_FAILED;
  if (!same_file(before, after)) return ReadStatus::CHANGED;
  if (check_bool) {
    bool good = true;
    runs.each(start, [&](int64_t, int64_t at, int64_t bytes) {
      good = good && bools_ok(out + at, static_cast<size_t>(bytes));
    });
    if (!good) return ReadStatus::BAD_BOOL;
  }
  return ReadStatus::OK;
}


}  // namespace

ReadStatus read_window_parsed(const char* path, const Wanted& want, const int64_t* start,
                              const int64_t* window, size_t itemsize, const uint8_t* fill,
                              uint8_t* out, bool check_bool, uint64_t* bytes_read) {
  auto open_head = [&](Fd& fd, struct stat& before, uint64_t payload, uint64_t* at,
                       uint64_t* requested) {
    NpyHeader h;
    const ReadStatus status = open_parsed(path, want, fd, before, h, requested);
    if (status != ReadStatus::OK) return status;
    *at = h.data_offset;
    // the dims are want's; an itemsize other than its dtype's would read other bytes
    return h.payload_bytes == payload ? ReadStatus::OK : ReadStatus::HEADER_MISMATCH;
  };
  return read_window_with(want.dims, start, window, want.rank, itemsize, fill, out, check_bool,
                          bytes_read, open_head);
}

namespace {

// A double truncated to int64 (as TensorFlow's cast does), false where it is not finite or
// does not fit.
bool truncated(double x, int64_t* out) {
  if (!(x > -9.2e18 && x < 9.2e18)) return false;  // NaN fails too
  *out = static_cast<int64_t>(x);
  return true;
}

// The start on one cropped axis of size `size` (place_window's rule), false on an overflow or
// a draw it cannot use.
bool place_axis(const Placement& place, int i, int64_t dim, int64_t size, int64_t* start) {
  int64_t diff;
  if (__builtin_sub_overflow(dim, size, &diff) || diff == INT64_MIN) return false;
  switch (place.start) {
    case WindowStart::CENTER:
      *start = diff >= 0 ? diff / 2 : -((-diff + 1) / 2);  // floor division
      return true;
    case WindowStart::FIXED:
      *start = place.fixed[i];
      return true;
    case WindowStart::RANDOM:
      break;
  }
  const int64_t lo = std::min<int64_t>(0, diff), span = diff < 0 ? -diff : diff;
  if (span == INT64_MAX) return false;  // span + 1
  const double u = place.draw[i];
  int64_t step;
  if (!truncated(std::floor(u * static_cast<double>(span + 1)), &step)) return false;
  // (a draw below 0 gives a step below 0 and a start below lo, as in the graph)
  if (__builtin_add_overflow(lo, std::min(step, span), start)) return false;
  if (place.draw_count == 2 * place.count) {
    int64_t centre;
    if (!truncated(place.draw[place.count + i], &centre)) return false;
    if (centre >= 0) *start = std::min(std::max(centre - size / 2, lo), lo + span);
  }
  return true;
}

}  // namespace

bool place_window(const Placement& place, const int64_t* dims, int rank, int64_t* start,
                  bool* fits) {
  if (rank < 0 || rank > kMaxRank || place.count < 0 || place.count > rank) return false;
  if (place.start == WindowStart::RANDOM &&
      (place.draw == nullptr ||
       (place.draw_count != place.count && place.draw_count != 2 * place.count))) {
    return false;
  }
  if (place.start == WindowStart::FIXED && place.count > 0 && place.fixed == nullptr) {
    return false;
  }
  bool seen[kMaxRank] = {};
  for (int a = 0; a < rank; ++a) start[a] = 0;
  *fits = true;
  for (int i = 0; i < place.count; ++i) {
    const int axis = place.axes[i];
    const int64_t size = place.sizes[i];
    if (axis < 0 || axis >= rank || seen[axis] || size < 0 || dims[axis] < 0) return false;
    seen[axis] = true;
    if (!place_axis(place, i, dims[axis], size, &start[axis])) return false;
    int64_t end;
    if (__builtin_add_overflow(start[axis], size, &end)) return false;
    *fits = *fits && start[axis] >= 0 && end <= dims[axis];
  }
  if (place.policy != WindowPolicy::PAD) {
    for (int a = 0; a < rank; ++a) start[a] = std::max<int64_t>(start[a], 0);
  }
  return true;
}

ReadStatus read_window_placed(const char* path, const Wanted& want, const Placement& place,
                              const int64_t* window, size_t itemsize, const uint8_t* fill,
                              uint8_t* out, bool check_bool, int64_t* dims, uint64_t* bytes_read) {
  if (bytes_read != nullptr) *bytes_read = 0;
  if (want.rank < 0 || want.rank > kMaxRank) return ReadStatus::BAD_WINDOW;
  Fd opened;
  struct stat stat_opened;
  NpyHeader h;
  uint64_t head = 0;
  ReadStatus status = open_parsed(path, want, opened, stat_opened, h, &head);
  if (bytes_read != nullptr) *bytes_read = head;
  if (status != ReadStatus::OK) return status;
  for (int a = 0; a < want.rank; ++a) dims[a] = h.shape[a];
  int64_t start[kMaxRank];
  bool fits = false;
  if (!place_window(place, h.shape, want.rank, start, &fits)) return ReadStatus::BAD_WINDOW;
  if (place.policy == WindowPolicy::ERROR && !fits) return ReadStatus::OUTSIDE;
  // read_window_with's file is the one opened above (moved in): its header is read once
  auto open_head = [&](Fd& fd, struct stat& before, uint64_t payload, uint64_t* at,
                       uint64_t* requested) {
    fd.set(opened.get());
    opened.set(-1);
    before = stat_opened;
    *at = h.data_offset;
    *requested = head;
    return h.payload_bytes == payload ? ReadStatus::OK : ReadStatus::HEADER_MISMATCH;
  };
  status = read_window_with(h.shape, start, window, want.rank, itemsize, fill, out, check_bool,
                            bytes_read, open_head);
  if (bytes_read != nullptr) *bytes_read = std::max(*bytes_read, head);  // BAD_WINDOW's too
  return status;
}

ReadStatus check_npy(const uint8_t* data, size_t size, const uint8_t* header, size_t header_len,
                     size_t payload_len, bool check_bool) {
  if (header_len > kMaxHeader) return ReadStatus::HEADER_MISMATCH;
  if (payload_len > SIZE_MAX - header_len || size != header_len + payload_len) {
    return ReadStatus::SIZE_MISMATCH;
  }
  if (std::memcmp(data, header, header_len) != 0) return ReadStatus::HEADER_MISMATCH;
  if (check_bool && !bools_ok(data + header_len, payload_len)) return ReadStatus::BAD_BOOL;
  return ReadStatus::OK;
}


// --- read_rows --------------------------------------------------------------------------------
namespace {

// Swaps the byte order of each `unit`-byte element of `p` (n bytes, a multiple of unit).
void swap_units(uint8_t* p, size_t n, size_t unit) {
  for (size_t i = 0; i + unit <= n; i += unit) std::reverse(p + i, p + i + unit);
}

// A file read_rows has open: its index in `files`, how opening it went, its descriptor and its
// stat when opened.
struct OpenRowFile {
  uint64_t file;
  ReadStatus status;
  Fd fd;
  struct stat before;
};

// Whether run `r` lies within its file (checked arithmetic): its first byte in `*offset`.
bool run_in_file(const RowFile& f, const RowRun& r, size_t row_bytes, uint64_t* offset) {
  if (f.data_offset > f.size || row_bytes == 0) return false;
  const uint64_t payload = f.size - f.data_offset;
  if (payload % row_bytes != 0) return false;
  const uint64_t rows = payload / row_bytes;
  if (r.first > rows || r.rows > rows - r.first) return false;
  *offset = f.data_offset + r.first * row_bytes;  // within size: no overflow
  return true;
}

}  // namespace

void read_rows(const RowFile* files, size_t file_count, const RowRun* runs, size_t run_count,
               size_t row_bytes, size_t swap_unit, bool check_bool, uint8_t* out,
               ReadStatus* statuses) {
  std::unique_ptr<OpenRowFile[]> open(new (std::nothrow) OpenRowFile[kRowFilesOpen]);
  size_t opened = 0;
  uint8_t* at = out;
  for (size_t i = 0; i < run_count; ++i) {
    const RowRun& r = runs[i];
    uint8_t* slice = at;
    at += r.rows * row_bytes;
    uint64_t offset = 0;
    if (r.file >= file_count || !run_in_file(files[r.file], r, row_bytes, &offset)) {
      statuses[i] = ReadStatus::BAD_WINDOW;
      continue;
    }
    const RowFile& f = files[r.file];
    const size_t length = static_cast<size_t>(r.rows * row_bytes);
    OpenRowFile* held = nullptr;
    for (size_t k = 0; k < opened && held == nullptr; ++k) {
      if (open[k].file == r.file) held = &open[k];
    }
    if (held == nullptr && open != nullptr && opened < kRowFilesOpen) {
      held = &open[opened++];  // kept even where opening failed: its later runs fail alike
      held->file = r.file;
      held->status = open_sized(f.path, f.size, held->fd, held->before);
    }
    if (held == nullptr) {  // more files than are kept open: this run opens its own
      statuses[i] = read_range(f.path, f.size, offset, slice, length);
    } else if (held->status != ReadStatus::OK) {
      statuses[i] = held->status;
    } else {
      statuses[i] = read_all(held->fd.get(), nullptr, 0, slice, length, offset);
    }
  }
  // every file kept open must be unchanged from its first run to now
  for (size_t k = 0; k < opened; ++k) {
    if (open[k].status != ReadStatus::OK) continue;
    struct stat after;
    if (fstat(open[k].fd.get(), &after) == 0 && same_file(open[k].before, after)) continue;
    for (size_t i = 0; i < run_count; ++i) {
      if (runs[i].file == open[k].file && statuses[i] == ReadStatus::OK) {
        statuses[i] = ReadStatus::CHANGED;
      }
    }
  }
  at = out;
  for (size_t i = 0; i < run_count; ++i) {
    const size_t length = static_cast<size_t>(runs[i].rows * row_bytes);
    if (statuses[i] == ReadStatus::OK && check_bool && !bools_ok(at, length)) {
      statuses[i] = ReadStatus::BAD_BOOL;
    }
    if (statuses[i] != ReadStatus::OK) {
      std::memset(at, 0, length);
    } else if (files[runs[i].file].swap && swap_unit > 1) {
      swap_units(at, length, swap_unit);
    }
    at += length;
  }
}

}  // namespace npyio
