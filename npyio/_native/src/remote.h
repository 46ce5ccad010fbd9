// npyio's native reader, its read of a path with a scheme (gs://, ram://, file://, ...):
// TensorFlow's own file systems (Env::Default()), one read per object, then the core's check
// (check_npy). Part of the op layer: the core (npy_read.h) stays TensorFlow-free.
#ifndef NPYIO_NATIVE_REMOTE_H_
#define NPYIO_NATIVE_REMOTE_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "npy_read.h"

namespace npyio {

// Whether the op reads `path` through TensorFlow's file systems rather than open(2): a path
// with a scheme ("gs://b/o", "ram://x", "file:///x").
bool has_scheme(const std::string& path);

// The object `path` read whole, as `data` and `size` (its bytes stay valid until the next
// call or the object's end): OK when the file system gave exactly `expected` bytes. One
// NewRandomAccessFile and one Read of more than `expected` bytes and more than TensorFlow's
// 64 MiB GCS read block, so that the read bypasses that block (no zero fill), asks for no
// stat, and sees an object longer than expected. The buffer is allocated, not written: only
// the pages the read fills are touched.
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
};

// The least a read of an object asks for: one byte more than TensorFlow's default GCS read
// block (64 MiB), which a read of at most that size would allocate and zero-fill.
constexpr size_t kBlockBypass = (size_t{64} << 20) + 1;

}  // namespace npyio

#endif  // NPYIO_NATIVE_REMOTE_H_
