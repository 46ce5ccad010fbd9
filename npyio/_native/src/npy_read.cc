// The TensorFlow-free core of npyio's native reader (see npy_read.h).
#include "npy_read.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <memory>

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

}  // namespace

// Opens `path` into `fd` and stats it into `st`: OK if it is a regular file of exactly `size`
// bytes. O_NONBLOCK: opening a FIFO with no writer must not wait for one.
ReadStatus open_sized(const char* path, uint64_t size, Fd& fd, struct stat& st) {
  int raw;
  do {
    raw = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  } while (raw < 0 && errno == EINTR);
  if (raw < 0) return ReadStatus::OPEN_FAILED;
  fd.set(raw);
  if (fstat(fd.get(), &st) != 0) return ReadStatus::READ_FAILED;
  if (!S_ISREG(st.st_mode)) return ReadStatus::NOT_REGULAR;
  if (st.st_size < 0 || static_cast<uint64_t>(st.st_size) != size) {
    return ReadStatus::SIZE_MISMATCH;
  }
  return ReadStatus::OK;
}

bool has_size(const char* path, size_t size) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode) && static_cast<size_t>(st.st_size) == size;
}

ReadStatus read_range(const char* path, uint64_t file_size, uint64_t offset, uint8_t* out,
                      size_t length) {
  if (offset > file_size || length > file_size - offset) return ReadStatus::SIZE_MISMATCH;
  Fd fd;
  struct stat before;
  ReadStatus status = open_sized(path, file_size, fd, before);
  if (status != ReadStatus::OK) return status;
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
  uint8_t small[4096];
  std::unique_ptr<uint8_t[]> big;
  uint8_t* head = small;
  if (header_len > sizeof(small)) {
    big.reset(new (std::nothrow) uint8_t[header_len]);
    if (!big) return ReadStatus::READ_FAILED;
    head = big.get();
  }
  ReadStatus status = read_all(fd.get(), head, header_len, out, payload_len);
  if (status != ReadStatus::OK) return status;
  if (std::memcmp(head, header, header_len) != 0) return ReadStatus::HEADER_MISMATCH;
  struct stat after;
  if (fstat(fd.get(), &after) != 0) return ReadStatus::READ_FAILED;
  if (!same_file(before, after)) return ReadStatus::CHANGED;
  if (check_bool && !bools_ok(out, payload_len)) return ReadStatus::BAD_BOOL;
  return ReadStatus::OK;
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

}  // namespace npyio
