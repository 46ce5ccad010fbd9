// npyio's native reader as TensorFlow ops, a thin layer over npy_read.h: NpyioReadFiles (a
// batch of .npy files of one shape), NpyioReadFile (one file of any shape, its header parsed
// by the core), NpyioReadWindows (a window of each file, placed by the shape its header gives),
// NpyioReadRanges (byte ranges of files, for rows and packs) and NpyioReadRows (rows of files
// numbered as one sequence).
//
// A batch of paths becomes one [B, *shape] tensor, each file read straight into its slice, and
// a [B] bool `ok`: false where the core doubted the file (its slice is then zeros), which the
// caller sends through the graph path. A large batch that no file of the plan's size is in
// gives [0, *shape] and every file doubted (kCheckedBytes). A path with a scheme (gs://,
// ram://, ...) is read through TensorFlow's file systems (remote.h), one read per object, on
// a pool of its own, and doubted for any status but a whole object of the plan's size; it is
// never an error of the op. Sizes are checked arithmetic: a shape whose bytes pass int64 is an
// error of the op where it is built. An allocation that fails (std::bad_alloc) doubts its file,
// or is an error of the op (RESOURCE_EXHAUSTED), never the end of the process. The op is not
// stateful (tf.io.read_file is not either): a stateful op would stop tf.data from
// checkpointing the iterator.
#include <algorithm>
#include <atomic>
#include <climits>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "npy_read.h"
#include "remote.h"
#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/shape_inference.h"
#include "tensorflow/core/framework/tensor_shape.h"
#include "tensorflow/core/framework/types.h"
#include "tensorflow/core/platform/env.h"
#include "tensorflow/core/platform/threadpool.h"
#include "tensorflow/core/util/work_sharder.h"

namespace {

using ::tensorflow::DataType;
using ::tensorflow::OpKernel;
using ::tensorflow::OpKernelConstruction;
using ::tensorflow::OpKernelContext;
using ::tensorflow::PartialTensorShape;
using ::tensorflow::Tensor;
using ::tensorflow::TensorShape;
using ::tensorflow::tstring;
using ::tensorflow::shape_inference::InferenceContext;
using ::tensorflow::shape_inference::ShapeHandle;

// kParallelBytes and kCheckedBytes (npy_read.h): when a batch's reads go to TF's CPU worker
// threads, and when its allocation waits for a file of the plan's size.
using npyio::kCheckedBytes;
using npyio::kParallelBytes;

// A local path of a batch as the core takes it, or "" where the core must doubt it.
std::string local_path(const tstring& name) { return npyio::local_path({name.data(), name.size()}); }

// Objects read at once through TensorFlow's file systems (gs://, ...), by every op of the
// process together (npyio::kRemoteThreads): each read mostly waits on the network, so a
// batch's reads are in flight together, on threads of their own rather than the CPU workers
// (one per core).
tensorflow::thread::ThreadPool* remote_pool() {
  // low_latency_hint false: an idle thread sleeps at once instead of spinning for work first;
  // spinning buys nothing for reads that wait on the network
  static auto* pool = new tensorflow::thread::ThreadPool(
      tensorflow::Env::Default(), tensorflow::ThreadOptions(), "npyio_remote",
      npyio::kRemoteThreads, /*low_latency_hint=*/false);
  return pool;
}

// Runs body() and makes a std::bad_alloc from it an error of the op: an allocation that fails
// must not end the process (an exception out of Compute would).
template <typename Body>
void guarded(OpKernelContext* ctx, const char* op, const Body& body) {
  try {
    body();
  } catch (const std::bad_alloc&) {
    ctx->SetStatus(absl::ResourceExhaustedError(
        absl::StrCat(op, ": out of memory while reading a batch of ",
                     ctx->input(0).NumElements(), " paths")));
  }
}

// Whether fn() ran without std::bad_alloc: for the bodies run on worker threads, where an
// exception would end the process before `guarded` sees it; the caller doubts that file.
template <typename Fn>
bool no_bad_alloc(const Fn& fn) {
  try {
    fn();
    return true;
  } catch (const std::bad_alloc&) {
    return false;
  }
}

// a * b, or the most int64 holds where the product passes it (for the sharding's cost only).
int64_t saturated_product(int64_t a, int64_t b) {
  int64_t out;
  return __builtin_mul_overflow(a, b, &out) ? INT64_MAX : out;
}

// Runs fn(0) ... fn(n - 1) on the remote pool, fn(0) in the calling thread, and waits for all.
template <typename Fn>
void on_remote_pool(int64_t n, const Fn& fn) {
  std::mutex mu;
  std::condition_variable done;
  int64_t left = n - 1;
  for (int64_t i = 1; i < n; ++i) {
    remote_pool()->Schedule([&, i] {
      fn(i);
      std::lock_guard<std::mutex> lock(mu);
      if (--left == 0) done.notify_one();
    });
  }
  if (n > 0) fn(0);
  std::unique_lock<std::mutex> lock(mu);
  done.wait(lock, [&] { return left <= 0; });
}

REGISTER_OP("NpyioReadFiles")
    .Input("paths: string")
    .Output("values: dtype")
    .Output("ok: bool")
    .Attr("dtype: type")
    .Attr("shape: shape")
    .Attr("header: string")
    .SetShapeFn([](InferenceContext* c) -> absl::Status {
      ShapeHandle paths;
      TF_RETURN_IF_ERROR(c->WithRank(c->input(0), 1, &paths));
      PartialTensorShape shape;
      TF_RETURN_IF_ERROR(c->GetAttr("shape", &shape));
      ShapeHandle element;
      TF_RETURN_IF_ERROR(c->MakeShapeFromPartialTensorShape(shape, &element));
      // [B, *shape], or [0, *shape] when no file holds the shape (kCheckedBytes)
      ShapeHandle values;
      TF_RETURN_IF_ERROR(c->Concatenate(c->Vector(c->UnknownDim()), element, &values));
      c->set_output(0, values);
      c->set_output(1, paths);
      return absl::OkStatus();
    });

class NpyioReadFilesOp : public OpKernel {
 public:
  explicit NpyioReadFilesOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("dtype", &dtype_));
    PartialTensorShape shape;
    OP_REQUIRES_OK(ctx, ctx->GetAttr("shape", &shape));
    OP_REQUIRES(ctx, shape.IsFullyDefined(),
                absl::InvalidArgumentError(absl::StrCat(
                    "NpyioReadFiles: shape must be fully defined, got ", shape.DebugString())));
    OP_REQUIRES(ctx, shape.AsTensorShape(&shape_),
                absl::InvalidArgumentError("NpyioReadFiles: shape is not a tensor shape"));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("header", &header_));
    OP_REQUIRES(ctx, header_.size() <= npyio::kMaxHeader,
                absl::InvalidArgumentError(absl::StrCat("NpyioReadFiles: header of ",
                                                        header_.size(), " bytes is too long")));
    const int size = tensorflow::DataTypeSize(dtype_);
    OP_REQUIRES(ctx, size > 0,
                absl::InvalidArgumentError(absl::StrCat("NpyioReadFiles: dtype ",
                                                        tensorflow::DataTypeString(dtype_),
                                                        " has no fixed size")));
    // The file's bytes, header and payload, must fit in int64 (an off_t): else the product
    // (elements times itemsize) wraps, and a file of another size would be read as this one.
    int64_t payload = 0, file_size = 0;
    OP_REQUIRES(ctx,
                !__builtin_mul_overflow(shape_.num_elements(), static_cast<int64_t>(size),
                                        &payload) &&
                    !__builtin_add_overflow(payload, static_cast<int64_t>(header_.size()),
                                            &file_size),
                absl::InvalidArgumentError(absl::StrCat(
                    "NpyioReadFiles: shape ", shape_.DebugString(), " of ",
                    tensorflow::DataTypeString(dtype_),
                    " is too large: its file would pass 2**63 - 1 bytes")));
    payload_ = static_cast<size_t>(payload);
    file_size_ = static_cast<size_t>(file_size);
  }

  void Compute(OpKernelContext* ctx) override {
    guarded(ctx, "NpyioReadFiles", [&] { read_batch(ctx); });
  }

 private:
  // The paths with a scheme of a batch: each object read whole, all at once, and checked
  // before the output is allocated; its payload is copied into its slice after.
  struct Remote {
    std::vector<int64_t> index;  // into the batch
    std::vector<npyio::RemoteObject> objects;
    std::vector<char> ok;
  };

  void read_remote(const tensorflow::TTypes<tstring>::ConstFlat& names, Remote& r) const {
    for (int64_t i = 0; i < names.size(); ++i) {
      if (npyio::has_scheme({names(i).data(), names(i).size()})) r.index.push_back(i);
    }
    r.objects = std::vector<npyio::RemoteObject>(r.index.size());
    r.ok.assign(r.index.size(), 0);
    const auto* header = reinterpret_cast<const uint8_t*>(header_.data());
    on_remote_pool(static_cast<int64_t>(r.index.size()), [&](int64_t j) {
      const auto& name = names(r.index[j]);
      npyio::RemoteObject& object = r.objects[j];
      bool good = false;
      const bool ran = no_bad_alloc([&] {
        good = object.read(std::string(name.data(), name.size()), file_size_) ==
                   npyio::ReadStatus::OK &&
               npyio::check_npy(object.data(), object.size(), header, header_.size(), payload_,
                                dtype_ == tensorflow::DT_BOOL) == npyio::ReadStatus::OK;
      });
      r.ok[j] = ran && good;
    });
  }

  // Whether a batch of n * payload_ >= kCheckedBytes may be allocated: some file of it (an
  // object read, or a local file by stat) has exactly the plan's size.
  bool some_file_fits(const tensorflow::TTypes<tstring>::ConstFlat& names,
                      const Remote& r) const {
    const int64_t n = names.size();
    if (!npyio::reaches(n, payload_, kCheckedBytes)) return true;
    for (char ok : r.ok) {
      if (ok) return true;
    }
    for (int64_t i = 0; i < n; ++i) {
      const std::string path = local_path(names(i));
      if (!path.empty() && npyio::has_size(path.c_str(), file_size_)) return true;
    }
    return false;
  }

  // One local file into its slice (null for a 0-byte payload); false where it is doubted.
  bool read_local(const tstring& name, uint8_t* slice) const {
    bool good = false;
    const bool ran = no_bad_alloc([&] {
      const std::string path = local_path(name);
      good = !path.empty() &&
             npyio::read_npy(path.c_str(), reinterpret_cast<const uint8_t*>(header_.data()),
                             header_.size(), slice, payload_,
                             dtype_ == tensorflow::DT_BOOL) == npyio::ReadStatus::OK;
    });
    return ran && good;
  }

  void read_batch(OpKernelContext* ctx) {
    const Tensor& paths = ctx->input(0);
    OP_REQUIRES(ctx, paths.dims() == 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "NpyioReadFiles: paths must be a vector, got shape ",
                    paths.shape().DebugString())));
    const int64_t n = paths.dim_size(0);
    auto names = paths.flat<tstring>();
    Tensor* ok = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, TensorShape({n}), &ok));
    auto oks = ok->flat<bool>();
    Remote remote;
    read_remote(names, remote);
    // [0, *shape] and every file doubted where no file holds the plan's size (kCheckedBytes)
    TensorShape out_shape({some_file_fits(names, remote) ? n : 0});
    OP_REQUIRES_OK(ctx, out_shape.AppendShapeWithStatus(shape_));
    Tensor* values = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, out_shape, &values));
    if (out_shape.dim_size(0) == 0 && n > 0) {
      for (int64_t i = 0; i < n; ++i) oks(i) = false;
      return;
    }
    uint8_t* base = payload_ == 0 ? nullptr : static_cast<uint8_t*>(values->data());
    std::vector<char> done(n, 0);
    for (size_t j = 0; j < remote.index.size(); ++j) {
      const int64_t i = remote.index[j];
      if (base != nullptr) {
        uint8_t* slice = base + i * payload_;
        if (remote.ok[j]) {
          std::memcpy(slice, remote.objects[j].data() + header_.size(), payload_);
        } else {
          std::memset(slice, 0, payload_);
        }
      }
      oks(i) = remote.ok[j] != 0;
      done[i] = 1;
    }
    auto read = [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        if (done[i]) continue;
        uint8_t* slice = base == nullptr ? nullptr : base + i * payload_;
        oks(i) = read_local(names(i), slice);
        if (!oks(i) && slice != nullptr) std::memset(slice, 0, payload_);
      }
    };
    auto* workers = ctx->device()->tensorflow_cpu_worker_threads();
    if (n > 1 && npyio::reaches(n, payload_, kParallelBytes) && workers != nullptr &&
        workers->num_threads > 1) {
      // The cost per file, in Shard's units (about a cycle each): a copy of its bytes.
      tensorflow::Shard(workers->num_threads, workers->workers, n,
                        static_cast<int64_t>(payload_) + 10000, read);
    } else {
      read(0, n);
    }
  }

  DataType dtype_;
  TensorShape shape_;
  std::string header_;
  size_t payload_ = 0, file_size_ = 0;
};

REGISTER_KERNEL_BUILDER(Name("NpyioReadFiles").Device(tensorflow::DEVICE_CPU), NpyioReadFilesOp);

// NpyioReadRanges: per range i, `length[i]` bytes at `offset[i]` of `paths[i]`, whose size
// must still be `sizes[i]` (what the plan recorded), as one string each, read with pread
// straight into it; `ok[i]` false where the core doubted the file (its value is then empty).
// A length of -1 reads nothing: the value is `given[i]`, already read (by the graph path), so
// that a caller needs no branch between the two.
REGISTER_OP("NpyioReadRanges")
    .Input("paths: string")
    .Input("offsets: int64")
    .Input("lengths: int64")
    .Input("sizes: int64")
    .Input("given: string")
    .Output("values: string")
    .Output("ok: bool")
    .SetShapeFn([](InferenceContext* c) -> absl::Status {
      ShapeHandle n;
      TF_RETURN_IF_ERROR(c->WithRank(c->input(0), 1, &n));
      for (int i = 1; i < 5; ++i) {
        ShapeHandle other;
        TF_RETURN_IF_ERROR(c->WithRank(c->input(i), 1, &other));
        TF_RETURN_IF_ERROR(c->Merge(n, other, &n));
      }
      c->set_output(0, n);
      c->set_output(1, n);
      return absl::OkStatus();
    });

class NpyioReadRangesOp : public OpKernel {
 public:
  explicit NpyioReadRangesOp(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    guarded(ctx, "NpyioReadRanges", [&] { read_ranges(ctx); });
  }

 private:
  // The core's allocation for range i (read_range_into, once the file is checked): its string
  // sized to the range. A tstring's own malloc is not checked (a failure writes through a null
  // pointer), so the bytes are first asked of malloc here, and given back just before the
  // string asks for them: a failure is then NO_MEMORY, not a crash.
  struct Room {
    tstring* value;
    static uint8_t* allocate(size_t length, void* context) {
      tstring* value = static_cast<Room*>(context)->value;
      void* probe = std::malloc(length + 16);  // the string's own rounding up, and its NUL
      if (probe == nullptr) return nullptr;
      std::free(probe);
      value->resize_uninitialized(length);
      return reinterpret_cast<uint8_t*>(value->mdata());
    }
  };

  void read_ranges(OpKernelContext* ctx) {
    const Tensor& paths = ctx->input(0);
    const int64_t n = paths.NumElements();
    for (int i = 0; i < 5; ++i) {
      OP_REQUIRES(ctx, ctx->input(i).dims() == 1 && ctx->input(i).dim_size(0) == n,
                  absl::InvalidArgumentError(absl::StrCat(
                      "NpyioReadRanges: inputs must be vectors of one length, got shapes ",
                      paths.shape().DebugString(), " and ", ctx->input(i).shape().DebugString())));
    }
    auto names = paths.flat<tstring>();
    auto offsets = ctx->input(1).flat<int64_t>();
    auto lengths = ctx->input(2).flat<int64_t>();
    auto sizes = ctx->input(3).flat<int64_t>();
    auto given = ctx->input(4).flat<tstring>();
    Tensor* values = nullptr;
    Tensor* ok = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({n}), &values));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, TensorShape({n}), &ok));
    auto out = values->flat<tstring>();
    auto oks = ok->flat<bool>();
    int64_t bytes = 0;  // for the sharding's cost: saturates rather than wraps
    std::vector<bool> todo(n, false);
    for (int64_t i = 0; i < n; ++i) {
      if (lengths(i) == -1) {
        out(i) = given(i);
        oks(i) = true;
        continue;
      }
      // a range outside the recorded size is doubted before anything is allocated for it
      const bool sane = offsets(i) >= 0 && lengths(i) >= 0 && sizes(i) >= 0 &&
                        offsets(i) <= sizes(i) && lengths(i) <= sizes(i) - offsets(i);
      oks(i) = sane;
      todo[i] = sane;
      if (sane && __builtin_add_overflow(bytes, lengths(i), &bytes)) bytes = INT64_MAX;
    }
    std::atomic<int64_t> no_memory{n};  // the first range that found no memory, else n
    auto read = [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        if (!todo[i]) continue;
        // the file is checked (open, regular, of its recorded size) before its string is sized
        npyio::ReadStatus status = npyio::ReadStatus::NO_MEMORY;
        no_bad_alloc([&] {
          std::string path(names(i).data(), names(i).size());
          Room room{&out(i)};
          status = path.find('\0') != std::string::npos
                       ? npyio::ReadStatus::OPEN_FAILED
                       : npyio::read_range_into(path.c_str(), static_cast<uint64_t>(sizes(i)),
                                                static_cast<uint64_t>(offsets(i)),
                                                static_cast<size_t>(lengths(i)),
                                                &Room::allocate, &room);
        });
        if (status == npyio::ReadStatus::NO_MEMORY) {
          int64_t first = no_memory.load();
          while (i < first && !no_memory.compare_exchange_weak(first, i)) {
          }
        }
        if (status != npyio::ReadStatus::OK) out(i).clear();
        oks(i) = status == npyio::ReadStatus::OK;
      }
    };
    auto* workers = ctx->device()->tensorflow_cpu_worker_threads();
    if (n > 1 && bytes >= static_cast<int64_t>(kParallelBytes) && workers != nullptr &&
        workers->num_threads > 1) {
      tensorflow::Shard(workers->num_threads, workers->workers, n, bytes / n + 10000, read);
    } else {
      read(0, n);
    }
    const int64_t i = no_memory.load();
    OP_REQUIRES(ctx, i == n,
                absl::ResourceExhaustedError(absl::StrCat(
                    std::string(names(i).data(), names(i).size()), ": out of memory for ",
                    lengths(i), " bytes at byte ", offsets(i), " (NpyioReadRanges)")));
  }
};

REGISTER_KERNEL_BUILDER(Name("NpyioReadRanges").Device(tensorflow::DEVICE_CPU), NpyioReadRangesOp);

// The windows of a batch, row by row: read_row(i, slice, &bytes) reads row i's window into its
// slice (null for an empty window) and says whether it is good; a row it doubts is zeroed. Rows
// are read on TF's CPU workers where the batch's windows are large, else in the calling thread.
template <typename ReadRow>
void read_window_rows(OpKernelContext* ctx, int64_t n, size_t window_bytes, Tensor* values,
                      Tensor* ok, Tensor* bytes, const ReadRow& read_row) {
  auto oks = ok->flat<bool>();
  auto counts = bytes->flat<int64_t>();
  uint8_t* base = window_bytes == 0 ? nullptr : static_cast<uint8_t*>(values->data());
  auto read = [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      uint8_t* slice = base == nullptr ? nullptr : base + i * window_bytes;
      uint64_t got = 0;
      bool good = false;
      const bool ran = no_bad_alloc([&] { good = read_row(i, slice, &got); });
      good = good && ran;
      if (!good && slice != nullptr) std::memset(slice, 0, window_bytes);
      oks(i) = good;
      counts(i) = static_cast<int64_t>(got);
    }
  };
  auto* workers = ctx->device()->tensorflow_cpu_worker_threads();
  const bool large = npyio::reaches(n, window_bytes, kParallelBytes);
  if (n > 1 && large && workers != nullptr && workers->num_threads > 1) {
    // The cost per file, in Shard's units (about a cycle each): a copy of its window.
    tensorflow::Shard(workers->num_threads, workers->workers, n,
                      static_cast<int64_t>(window_bytes) + 10000, read);
  } else {
    read(0, n);
  }
}

// The grammar's type code of a dtype ("f4"), or null for one npyio does not read.
const char* grammar_code(DataType dtype) {
  switch (dtype) {
    case tensorflow::DT_BOOL: return "b1";
    case tensorflow::DT_INT8: return "i1";
    case tensorflow::DT_INT16: return "i2";
    case tensorflow::DT_INT32: return "i4";
    case tensorflow::DT_INT64: return "i8";
    case tensorflow::DT_UINT8: return "u1";
    case tensorflow::DT_UINT16: return "u2";
    case tensorflow::DT_UINT32: return "u4";
    case tensorflow::DT_UINT64: return "u8";
    case tensorflow::DT_HALF: return "f2";
    case tensorflow::DT_FLOAT: return "f4";
    case tensorflow::DT_DOUBLE: return "f8";
    case tensorflow::DT_COMPLEX64: return "c8";
    case tensorflow::DT_COMPLEX128: return "c16";
    default: return nullptr;
  }
}

// The core's Wanted for a dtype, a partial shape (-1 dims) and the limits, from an op's attrs
// `dtype`, `shape`, `max_header_size` and `max_file_size` (`dims` keeps the dims it points to).
absl::Status wanted_from_attrs(OpKernelConstruction* ctx, const char* op, bool rank_known,
                               DataType* dtype, std::vector<int64_t>* dims,
                               npyio::Wanted* want) {
  TF_RETURN_IF_ERROR(ctx->GetAttr("dtype", dtype));
  const char* code = grammar_code(*dtype);
  if (code == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        op, ": dtype ", tensorflow::DataTypeString(*dtype), " is not one npyio reads"));
  }
  PartialTensorShape shape;
  TF_RETURN_IF_ERROR(ctx->GetAttr("shape", &shape));
  if (shape.dims() > npyio::kMaxRank || (rank_known && shape.dims() < 0)) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": shape ", shape.DebugString(),
                                                   " must have a known rank of at most ",
                                                   npyio::kMaxRank));
  }
  for (int i = 0; i < shape.dims(); ++i) dims->push_back(shape.dim_size(i));
  int64_t header = 0, file = 0;
  TF_RETURN_IF_ERROR(ctx->GetAttr("max_header_size", &header));
  TF_RETURN_IF_ERROR(ctx->GetAttr("max_file_size", &file));
  if (header < 0) return absl::InvalidArgumentError(absl::StrCat(op, ": max_header_size < 0"));
  *want = {code, shape.dims(), dims->data(), static_cast<size_t>(header),
           file < 0 ? UINT64_MAX : static_cast<uint64_t>(file)};
  return absl::OkStatus();
}

// NpyioReadRows: rows of files numbered as one sequence (a pack's shards, `npyio.rows`'s
// files), straight into a [B, *shape] batch: row rows[i] is row rows[i] - starts[f] of file f,
// where starts[f] <= rows[i] < starts[f + 1]; file f's rows start at byte offsets[f], and it
// must be exactly that plus its rows' bytes; `little[f]` is its byte order (swapped into the
// machine's here). Neighbouring rows of one file are one pread, and each file is opened once
// per call (read_rows). `ok` [B] is false where the core doubted the row (its slice is then
// zeros): a row outside the numbering, a file missing, of another size, changed while read, a
// path with a scheme, or a bool byte other than 0 or 1. The caller sends a batch with a doubt
// through the graph path, which decides and names the file.
REGISTER_OP("NpyioReadRows")
    .Input("rows: int64")
    .Input("starts: int64")
    .Input("paths: string")
    .Input("offsets: int64")
    .Input("little: bool")
    .Output("values: dtype")
    .Output("ok: bool")
    .Attr("dtype: type")
    .Attr("shape: shape")
    .SetShapeFn([](InferenceContext* c) -> absl::Status {
      ShapeHandle rows, files;
      TF_RETURN_IF_ERROR(c->WithRank(c->input(0), 1, &rows));
      TF_RETURN_IF_ERROR(c->WithRank(c->input(1), 1, &files));
      TF_RETURN_IF_ERROR(c->WithRank(c->input(2), 1, &files));
      for (int i = 3; i < 5; ++i) {
        ShapeHandle other;
        TF_RETURN_IF_ERROR(c->WithRank(c->input(i), 1, &other));
        TF_RETURN_IF_ERROR(c->Merge(files, other, &files));
      }
      PartialTensorShape shape;
      TF_RETURN_IF_ERROR(c->GetAttr("shape", &shape));
      ShapeHandle element, values;
      TF_RETURN_IF_ERROR(c->MakeShapeFromPartialTensorShape(shape, &element));
      TF_RETURN_IF_ERROR(c->Concatenate(rows, element, &values));
      c->set_output(0, values);
      c->set_output(1, rows);
      return absl::OkStatus();
    });

class NpyioReadRowsOp : public OpKernel {
 public:
  explicit NpyioReadRowsOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("dtype", &dtype_));
    OP_REQUIRES(ctx, grammar_code(dtype_) != nullptr,
                absl::InvalidArgumentError(absl::StrCat("NpyioReadRows: dtype ",
                                                        tensorflow::DataTypeString(dtype_),
                                                        " is not one npyio reads")));
    PartialTensorShape shape;
    OP_REQUIRES_OK(ctx, ctx->GetAttr("shape", &shape));
    OP_REQUIRES(ctx, shape.IsFullyDefined() && shape.AsTensorShape(&shape_),
                absl::InvalidArgumentError(absl::StrCat(
                    "NpyioReadRows: shape ", shape.DebugString(), " must be fully defined")));
    const int64_t itemsize = tensorflow::DataTypeSize(dtype_);
    int64_t bytes = 0;
    OP_REQUIRES(ctx, !__builtin_mul_overflow(shape_.num_elements(), itemsize, &bytes),
                absl::InvalidArgumentError(absl::StrCat(
                    "NpyioReadRows: shape ", shape.DebugString(), " is too large")));
    row_bytes_ = static_cast<size_t>(bytes);
    const bool complex = dtype_ == tensorflow::DT_COMPLEX64 || dtype_ == tensorflow::DT_COMPLEX128;
    swap_unit_ = static_cast<size_t>(complex ? itemsize / 2 : itemsize);
  }

  void Compute(OpKernelContext* ctx) override {
    guarded(ctx, "NpyioReadRows", [&] { read(ctx); });
  }

 private:
  void read(OpKernelContext* ctx) {
    const Tensor& rows = ctx->input(0);
    const Tensor& starts = ctx->input(1);
    const int64_t files = ctx->input(2).NumElements();
    OP_REQUIRES(ctx,
                rows.dims() == 1 && starts.dims() == 1 && starts.dim_size(0) == files + 1 &&
                    ctx->input(3).NumElements() == files && ctx->input(4).NumElements() == files,
                absl::InvalidArgumentError(absl::StrCat(
                    "NpyioReadRows: rows must be [B], starts [F + 1], paths, offsets and little "
                    "[F], got ", rows.shape().DebugString(), ", ", starts.shape().DebugString(),
                    " and ", ctx->input(2).shape().DebugString())));
    const int64_t n = rows.dim_size(0);
    TensorShape out_shape({n});
    OP_REQUIRES_OK(ctx, out_shape.AppendShapeWithStatus(shape_));
    Tensor *values = nullptr, *ok = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, out_shape, &values));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, TensorShape({n}), &ok));
    auto oks = ok->flat<bool>();
    if (row_bytes_ == 0) {  // nothing to read: every row is good, as the graph path counts it
      for (int64_t i = 0; i < n; ++i) oks(i) = true;
      return;
    }
    Plan plan = plan_runs(ctx, rows.flat<int64_t>(), starts.flat<int64_t>(), files);
    std::vector<npyio::ReadStatus> statuses(plan.runs.size(), npyio::ReadStatus::OK);
    auto* base = static_cast<uint8_t*>(values->data());
    const bool check_bool = dtype_ == tensorflow::DT_BOOL;
    auto read = [&](int64_t begin, int64_t end) {  // read_rows never throws
      npyio::read_rows(plan.files.data(), plan.files.size(), plan.runs.data() + begin,
                       static_cast<size_t>(end - begin), row_bytes_, swap_unit_, check_bool,
                       base + plan.first_row[begin] * row_bytes_, statuses.data() + begin);
    };
    const int64_t count = static_cast<int64_t>(plan.runs.size());
    auto* workers = ctx->device()->tensorflow_cpu_worker_threads();
    const bool large = npyio::reaches(n, row_bytes_, kParallelBytes);
    if (count > 1 && large && workers != nullptr && workers->num_threads > 1) {
      tensorflow::Shard(workers->num_threads, workers->workers, count,
                        saturated_product(n / count + 1, row_bytes_) + 10000, read);
    } else {
      read(0, count);
    }
    for (int64_t k = 0; k < count; ++k) {  // a doubted run's rows are zeros (read_rows)
      const bool good = statuses[k] == npyio::ReadStatus::OK;
      for (int64_t i = plan.first_row[k]; i < plan.first_row[k + 1]; ++i) oks(i) = good;
    }
  }

  // The batch as the core reads it: the files its rows are in (paths kept in `paths`), its runs
  // of neighbours, and the batch row each run starts at (then n).
  struct Plan {
    std::vector<std::string> paths;
    std::vector<npyio::RowFile> files;
    std::vector<npyio::RowRun> runs;
    std::vector<int64_t> first_row;
  };

  Plan plan_runs(OpKernelContext* ctx, tensorflow::TTypes<int64_t>::ConstFlat rows,
                 tensorflow::TTypes<int64_t>::ConstFlat starts, int64_t files) {
    auto names = ctx->input(2).flat<tstring>();
    auto offsets = ctx->input(3).flat<int64_t>();
    auto little = ctx->input(4).flat<bool>();
    static const uint16_t kOne = 1;
    const bool machine_little = *reinterpret_cast<const uint8_t*>(&kOne) == 1;
    Plan plan;
    std::vector<int64_t> met;  // the files met, by their index in `paths`, in the plan's order
    const int64_t n = rows.size();
    int64_t last_file = -1, last_row = -1;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t r = rows(i);
      // the file whose range holds r: starts[f] <= r < starts[f + 1]; else none (f = files)
      const int64_t* s = starts.data();
      int64_t f = std::upper_bound(s, s + files + 1, r) - s - 1;
      if (f < 0 || f >= files || r >= s[f + 1]) f = files;
      if (f != files && f == last_file && r == last_row + 1) {
        plan.runs.back().rows += 1;
      } else {
        // the plan's entry for f; UINT64_MAX for a row in no file, which the core doubts
        uint64_t at = f == files ? UINT64_MAX : met.size();
        for (size_t k = 0; f != files && k < met.size(); ++k) {
          if (met[k] == f) at = k;
        }
        if (at == met.size()) {
          met.push_back(f);
          plan.paths.push_back(local_path(names(f)));
          int64_t size = 0, bytes = 0;
          const bool fits = offsets(f) >= 0 && s[f + 1] >= s[f] &&
                            !__builtin_mul_overflow(s[f + 1] - s[f],
                                                    static_cast<int64_t>(row_bytes_), &bytes) &&
                            !__builtin_add_overflow(offsets(f), bytes, &size);
          // a file whose size does not fit is given one its rows cannot lie in: a doubt
          plan.files.push_back({nullptr, fits ? static_cast<uint64_t>(size) : 0,
                                fits ? static_cast<uint64_t>(offsets(f)) : 1,
                                little(f) != machine_little});
        }
        plan.runs.push_back({at, f == files ? 0 : static_cast<uint64_t>(r - s[f]), 1});
        plan.first_row.push_back(i);
      }
      last_file = f;
      last_row = r;
    }
    plan.first_row.push_back(n);
    for (size_t k = 0; k < plan.files.size(); ++k) plan.files[k].path = plan.paths[k].c_str();
    return plan;
  }

  DataType dtype_;
  TensorShape shape_;
  size_t row_bytes_ = 0;
  size_t swap_unit_ = 1;
};

REGISTER_KERNEL_BUILDER(Name("NpyioReadRows").Device(tensorflow::DEVICE_CPU), NpyioReadRowsOp);

// NpyioReadFile: one .npy file of any shape. The core parses the file's own header
// (npy_header.h) and reads it if it holds `dtype` in the machine's byte order and C order, with
// `shape`'s rank and known dims (a partial shape: -1 dims, or an unknown rank), within the
// limits; `value` then has the file's shape. Otherwise `ok` is false and `value` is empty (the
// known dims, 0 for the others), and the caller sends the file through the graph path, which
// decides. The output is allocated only once the file's size is exactly its header plus the
// payload that header declares. A path with a scheme is always doubted (the graph path reads
// objects). For per-case shapes: whole arrays, one element at a time.
REGISTER_OP("NpyioReadFile")
    .Input("path: string")
    .Output("value: dtype")
    .Output("ok: bool")
    .Attr("dtype: type")
    .Attr("shape: shape")
    .Attr("max_header_size: int")
    .Attr("max_file_size: int")
    .SetShapeFn([](InferenceContext* c) -> absl::Status {
      ShapeHandle path;
      TF_RETURN_IF_ERROR(c->WithRank(c->input(0), 0, &path));
      PartialTensorShape shape;
      TF_RETURN_IF_ERROR(c->GetAttr("shape", &shape));
      ShapeHandle value;
      TF_RETURN_IF_ERROR(c->MakeShapeFromPartialTensorShape(shape, &value));
      c->set_output(0, value);
      c->set_output(1, c->Scalar());
      return absl::OkStatus();
    });

class NpyioReadFileOp : public OpKernel {
 public:
  explicit NpyioReadFileOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, wanted_from_attrs(ctx, "NpyioReadFile", false, &dtype_, &dims_, &want_));
  }

  void Compute(OpKernelContext* ctx) override {
    guarded(ctx, "NpyioReadFile", [&] { read(ctx); });
  }

 private:
  struct Room {
    OpKernelContext* ctx;
    DataType dtype;
    Tensor value;
  };

  // The value, of the header's shape (which the core checked against the file's size); made
  // the output only once the file is read whole.
  static uint8_t* allocate(const npyio::NpyHeader& h, void* context) {
    auto* room = static_cast<Room*>(context);
    TensorShape shape;
    for (int i = 0; i < h.rank; ++i) {
      if (!shape.AddDimWithStatus(h.shape[i]).ok()) return nullptr;
    }
    if (!room->ctx->allocate_temp(room->dtype, shape, &room->value).ok()) return nullptr;
    return room->value.NumElements() == 0 ? nullptr
                                          : static_cast<uint8_t*>(room->value.data());
  }

  void read(OpKernelContext* ctx) {
    const Tensor& path_tensor = ctx->input(0);
    OP_REQUIRES(ctx, path_tensor.dims() == 0,
                absl::InvalidArgumentError(absl::StrCat("NpyioReadFile: path must be a scalar, got shape ",
                                                        path_tensor.shape().DebugString())));
    const std::string path = local_path(path_tensor.scalar<tstring>()());
    Room room{ctx, dtype_, Tensor()};
    npyio::NpyHeader header;
    bool good = false;
    const bool ran = no_bad_alloc([&] {
      good = !path.empty() &&
             npyio::read_npy_parsed(path.c_str(), want_, dtype_ == tensorflow::DT_BOOL,
                                    &NpyioReadFileOp::allocate, &room,
                                    &header) == npyio::ReadStatus::OK;
    });
    good = good && ran;
    Tensor* ok = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, TensorShape({}), &ok));
    ok->scalar<bool>()() = good;
    if (good) {
      ctx->set_output(0, room.value);
      return;
    }
    // Doubted: an empty value, whatever the core allocated (a file that changed after).
    TensorShape empty;
    for (int64_t d : dims_) OP_REQUIRES_OK(ctx, empty.AddDimWithStatus(d < 0 ? 0 : d));
    if (empty.num_elements() != 0) {
      if (empty.dims() == 0) {
        OP_REQUIRES_OK(ctx, empty.AddDimWithStatus(0));
      } else {
        empty.set_dim(0, 0);
      }
    }
    Tensor* value = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, empty, &value));
  }

  DataType dtype_;
  std::vector<int64_t> dims_;
  npyio::Wanted want_{};
};

REGISTER_KERNEL_BUILDER(Name("NpyioReadFile").Device(tensorflow::DEVICE_CPU), NpyioReadFileOp);

// NpyioReadWindows: per file i, a window of the C-order array it holds, placed by the file's own
// shape and read by the core's read_window_placed: the header parsed once and checked against
// `dtype` in the machine's order and C order, `shape` (-1 dims: any size; the axes a window
// crops) and the limits; the window placed on the file's dims by npyio's rule (the core's
// place_window: `start` "random" by draws[i], "center" or "fixed" at `fixed`, on `axes` of
// sizes `window[axes]`, the other axes whole from 0; `policy` "error", "trim" or "pad"); then
// only its runs read (preadv). `values` [B, *window], elements past the array's edges set to
// `fill` (one element's bytes, or "" for zeros); `dims` [B, rank], each file's shape (0 where
// doubted before its header was read); `ok` [B], false where the core doubted the file, the
// draws or the window (its slice then zeros: the graph path decides); `bytes` [B], the bytes
// asked of the file system for it, header included. draws: [B, k] or [B, 2k] float64 for a
// random window (k axes; the second k are foreground voxels, -1 for none), anything for
// others. The output's size comes from the window attr alone, never from a file. Attrs that do
// not fit together are op errors; anything about a file or its draws is a doubt.
REGISTER_OP("NpyioReadWindows")
    .Input("paths: string")
    .Input("draws: float64")
    .Output("values: dtype")
    .Output("dims: int64")
    .Output("ok: bool")
    .Output("bytes: int64")
    .Attr("dtype: type")
    .Attr("shape: shape")
    .Attr("window: shape")
    .Attr("axes: list(int)")
    .Attr("start: {'random', 'center', 'fixed'}")
    .Attr("fixed: list(int) = []")
    .Attr("policy: {'error', 'trim', 'pad'}")
    .Attr("max_header_size: int")
    .Attr("max_file_size: int")
    .Attr("fill: string")
    .SetShapeFn([](InferenceContext* c) -> absl::Status {
      ShapeHandle paths, draws;
      TF_RETURN_IF_ERROR(c->WithRank(c->input(0), 1, &paths));
      TF_RETURN_IF_ERROR(c->WithRank(c->input(1), 2, &draws));
      PartialTensorShape window;
      TF_RETURN_IF_ERROR(c->GetAttr("window", &window));
      std::string start;
      std::vector<int32_t> axes;
      TF_RETURN_IF_ERROR(c->GetAttr("start", &start));
      TF_RETURN_IF_ERROR(c->GetAttr("axes", &axes));
      const int64_t k = static_cast<int64_t>(axes.size());
      if (start == "random" && c->ValueKnown(c->Dim(draws, 1)) &&
          c->Value(c->Dim(draws, 1)) != k && c->Value(c->Dim(draws, 1)) != 2 * k) {
        return absl::InvalidArgumentError(absl::StrCat(
            "NpyioReadWindows: draws must be [B, ", k, "] or [B, ", 2 * k,
            "] for a random window on ", k, " axes, got ", c->DebugString(draws)));
      }
      ShapeHandle element, values;
      TF_RETURN_IF_ERROR(c->MakeShapeFromPartialTensorShape(window, &element));
      TF_RETURN_IF_ERROR(c->Concatenate(paths, element, &values));
      c->set_output(0, values);
      c->set_output(1, c->Matrix(c->Dim(paths, 0), window.dims() < 0
                                                       ? c->UnknownDim()
                                                       : c->MakeDim(window.dims())));
      c->set_output(2, paths);
      c->set_output(3, paths);
      return absl::OkStatus();
    });

class NpyioReadWindowsOp : public OpKernel {
 public:
  explicit NpyioReadWindowsOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx,
                   wanted_from_attrs(ctx, "NpyioReadWindows", true, &dtype_, &dims_, &want_));
    itemsize_ = static_cast<size_t>(tensorflow::DataTypeSize(dtype_));
    PartialTensorShape window;
    OP_REQUIRES_OK(ctx, ctx->GetAttr("window", &window));
    OP_REQUIRES(ctx, window.IsFullyDefined() && window.dims() == want_.rank,
                absl::InvalidArgumentError(absl::StrCat(
                    "NpyioReadWindows: window ", window.DebugString(),
                    " must be fully defined, of the shape's rank ", want_.rank)));
    OP_REQUIRES(ctx, window.AsTensorShape(&window_),
                absl::InvalidArgumentError("NpyioReadWindows: window is not a tensor shape"));
    int64_t bytes = 0;
    OP_REQUIRES(ctx,
                !__builtin_mul_overflow(window_.num_elements(), static_cast<int64_t>(itemsize_),
                                        &bytes),
                absl::InvalidArgumentError(absl::StrCat("NpyioReadWindows: window ",
                                                        window.DebugString(), " is too large")));
    window_bytes_ = static_cast<size_t>(bytes);
    for (int i = 0; i < window.dims(); ++i) window_dims_.push_back(window.dim_size(i));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("fill", &fill_));
    OP_REQUIRES(ctx, fill_.empty() || fill_.size() == itemsize_,
                absl::InvalidArgumentError(absl::StrCat("NpyioReadWindows: fill must be "
                                                        "empty or one element, got ",
                                                        fill_.size(), " bytes")));
    OP_REQUIRES_OK(ctx, placement_from_attrs(ctx));
  }

  void Compute(OpKernelContext* ctx) override {
    guarded(ctx, "NpyioReadWindows", [&] { read(ctx); });
  }

 private:
  absl::Status placement_from_attrs(OpKernelConstruction* ctx) {
    std::vector<int32_t> axes;
    std::string start, policy;
    TF_RETURN_IF_ERROR(ctx->GetAttr("axes", &axes));
    TF_RETURN_IF_ERROR(ctx->GetAttr("start", &start));
    TF_RETURN_IF_ERROR(ctx->GetAttr("fixed", &fixed_));
    TF_RETURN_IF_ERROR(ctx->GetAttr("policy", &policy));
    std::vector<bool> seen(static_cast<size_t>(want_.rank), false);
    for (int32_t axis : axes) {
      if (axis < 0 || axis >= want_.rank || seen[static_cast<size_t>(axis)]) {
        return absl::InvalidArgumentError(absl::StrCat(
            "NpyioReadWindows: axes must be distinct axes of rank ", want_.rank));
      }
      seen[static_cast<size_t>(axis)] = true;
      axes_.push_back(axis);
      sizes_.push_back(window_dims_[static_cast<size_t>(axis)]);
    }
    place_.start = start == "random"   ? npyio::WindowStart::RANDOM
                   : start == "center" ? npyio::WindowStart::CENTER
                                       : npyio::WindowStart::FIXED;
    if (place_.start == npyio::WindowStart::FIXED && fixed_.size() != axes_.size()) {
      return absl::InvalidArgumentError("NpyioReadWindows: fixed must give a start per axis");
    }
    place_.policy = policy == "error"  ? npyio::WindowPolicy::ERROR
                    : policy == "trim" ? npyio::WindowPolicy::TRIM
                                       : npyio::WindowPolicy::PAD;
    place_.count = static_cast<int>(axes_.size());
    place_.axes = axes_.data();
    place_.sizes = sizes_.data();
    place_.fixed = fixed_.data();
    return absl::OkStatus();
  }

  void read(OpKernelContext* ctx) {
    const Tensor& paths = ctx->input(0);
    const Tensor& draws = ctx->input(1);
    const int rank = want_.rank;
    const int64_t k = place_.count;
    const bool random = place_.start == npyio::WindowStart::RANDOM;
    OP_REQUIRES(ctx,
                paths.dims() == 1 && draws.dims() == 2 &&
                    (!random || (draws.dim_size(0) == paths.dim_size(0) &&
                                 (draws.dim_size(1) == k || draws.dim_size(1) == 2 * k))),
                absl::InvalidArgumentError(absl::StrCat(
                    "NpyioReadWindows: paths must be [B] and, for a random window, draws [B, ",
                    k, "] or [B, ", 2 * k, "], got ", paths.shape().DebugString(), " and ",
                    draws.shape().DebugString())));
    const int64_t n = paths.dim_size(0);
    TensorShape out_shape({n});
    OP_REQUIRES_OK(ctx, out_shape.AppendShapeWithStatus(window_));
    Tensor *values = nullptr, *dims = nullptr, *ok = nullptr, *bytes = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, out_shape, &values));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, TensorShape({n, rank}), &dims));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(2, TensorShape({n}), &ok));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(3, TensorShape({n}), &bytes));
    auto names = paths.flat<tstring>();
    auto shapes = dims->matrix<int64_t>();
    const double* drawn = random ? draws.flat<double>().data() : nullptr;
    const int draw_count = random ? static_cast<int>(draws.dim_size(1)) : 0;
    const auto* fill = fill_.empty() ? nullptr : reinterpret_cast<const uint8_t*>(fill_.data());
    read_window_rows(ctx, n, window_bytes_, values, ok, bytes,
                     [&](int64_t i, uint8_t* slice, uint64_t* got) {
                       int64_t shape[npyio::kMaxRank] = {0};
                       npyio::Placement place = place_;
                       place.draw = drawn == nullptr ? nullptr : drawn + i * draw_count;
                       place.draw_count = draw_count;
                       const std::string path = local_path(names(i));
                       const bool good =
                           !path.empty() &&
                           npyio::read_window_placed(path.c_str(), want_, place,
                                                     window_dims_.data(), itemsize_, fill, slice,
                                                     dtype_ == tensorflow::DT_BOOL, shape,
                                                     got) == npyio::ReadStatus::OK;
                       for (int a = 0; a < rank; ++a) shapes(i, a) = shape[a];
                       return good;
                     });
  }

  DataType dtype_;
  size_t itemsize_ = 0;
  std::vector<int64_t> dims_, window_dims_, sizes_, fixed_;
  std::vector<int> axes_;
  npyio::Wanted want_{};
  npyio::Placement place_{};
  TensorShape window_;
  size_t window_bytes_ = 0;
  std::string fill_;
};

REGISTER_KERNEL_BUILDER(Name("NpyioReadWindows").Device(tensorflow::DEVICE_CPU),
                        NpyioReadWindowsOp);

// NpyioRemoteStats: what this process's remote reads did (remote.h's RemoteStats), as [8]
// int64: reads, reads that waited for the budget, bypass buffers not allocated (read with a
// buffer of the object's size), objects doubted for want of any buffer, the most bytes held
// at once, and the budget; then the local windows found cold and advised (npy_read.h's
// windows_advised), and the local headers read from their files, not the cache (headers_read).
// Stateful: each run reads the counters anew.
REGISTER_OP("NpyioRemoteStats")
    .Output("stats: int64")
    .SetIsStateful()
    .SetShapeFn([](InferenceContext* c) -> absl::Status {
      c->set_output(0, c->Vector(8));
      return absl::OkStatus();
    });

class NpyioRemoteStatsOp : public OpKernel {
 public:
  explicit NpyioRemoteStatsOp(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({8}), &out));
    const npyio::RemoteStats stats = npyio::remote_stats();
    auto v = out->flat<int64_t>();
    v(0) = stats.reads;
    v(1) = stats.waits;
    v(2) = stats.bypass_failed;
    v(3) = stats.unallocated;
    v(4) = stats.peak_bytes;
    v(5) = stats.budget_bytes;
    v(6) = static_cast<int64_t>(npyio::windows_advised());
    v(7) = static_cast<int64_t>(npyio::headers_read());
  }
};

REGISTER_KERNEL_BUILDER(Name("NpyioRemoteStats").Device(tensorflow::DEVICE_CPU),
                        NpyioRemoteStatsOp);

}  // namespace
