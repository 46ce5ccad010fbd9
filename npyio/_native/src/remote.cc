// npyio's native reader, its read of an object through TensorFlow's file systems (remote.h).
#include "remote.h"

#include <cstdlib>
#include <cstring>
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "tensorflow/core/platform/env.h"
#include "tensorflow/core/platform/file_system.h"

namespace npyio {

bool has_scheme(const std::string& path) { return path.find("://") != std::string::npos; }

RemoteObject::~RemoteObject() { std::free(buffer_); }

ReadStatus RemoteObject::read(const std::string& path, size_t expected) {
  data_ = nullptr;
  size_ = 0;
  if (path.find('\0') != std::string::npos) return ReadStatus::OPEN_FAILED;
  if (expected >= SIZE_MAX - kBlockBypass) return ReadStatus::SIZE_MISMATCH;
  std::unique_ptr<tensorflow::RandomAccessFile> file;
  if (!tensorflow::Env::Default()->NewRandomAccessFile(path, &file).ok()) {
    return ReadStatus::OPEN_FAILED;
  }
  // One byte more than expected, so that an object longer than expected is seen; above the
  // GCS read block. malloc, not new[] of a value: the pages stay untouched (a large block is
  // mapped lazily) beyond what the read writes.
  const size_t n = expected + 1 > kBlockBypass ? expected + 1 : kBlockBypass;
  std::free(buffer_);
  buffer_ = static_cast<char*>(std::malloc(n));
  if (buffer_ == nullptr) return ReadStatus::READ_FAILED;
  absl::string_view got;
  const absl::Status status = file->Read(0, n, &got, buffer_);
  // The end of the object within n bytes is OUT_OF_RANGE, with the bytes that exist.
  if (!status.ok() && !absl::IsOutOfRange(status)) return ReadStatus::READ_FAILED;
  if (got.size() != expected) {
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
