// NpyioBatchDataset: a tf.data dataset that reads its input's units into batches, in place of
// `batch`, a parallel `map` of NpyioReadFiles and `prefetch` (issue 53).
//
// Its input is the loader's stream of units, one element per unit (a path per part, the
// label's value, ...). Its iterator pulls a batch's units, allocates the batch's tensors, and
// reads each file of the parts it reads straight into its slice on a pool of its own, keeping
// up to `batches_ahead` batches in flight ahead of the consumer (0: kBatchesAhead, deeper
// while reads wait on storage), delivered in order; with
// `deterministic` false, a full batch read before those ahead of it goes first (the short last
// batch never does, and the order stays under symbolic checkpoints, whose batches each carry
// the input's state as of their last unit).
//
// A batch is first every input component batched (as `batch` would), then per part read a
// [B, *shape] `values` and a [B] bool `ok`, false where the core doubted the file (its slice is
// zeros). A batch with a doubted file goes through `fallback`, the graph path (npyio/_read/
// native.py's `settle`), which takes all of those and gives each part's values with the files
// the core doubted decoded there, or fails with the graph path's error naming the file. A
// batch without one never calls it: no function runs per batch. The element is then the
// entries `element` names of the batched components followed by the parts' values. A batch
// that no file of the plan's size is in, from kCheckedBytes on, allocates [0, *shape] and
// doubts every file, as NpyioReadFiles does.
//
// The pool's threads (read_pool.h, TensorFlow-free) are the reads in flight, sized for the
// storage, not tf.data's CPU budget: a read waits on the disk far longer than it computes. Reads
// that compute (a warm page cache) are cut into one task per thread of tf.data's runner: the
// cores, or `threading.private_threadpool_size`. A batch ahead of the first in flight holds its
// bytes of the pipeline's RAM budget (`autotune.ram_budget`; by default half the machine's),
// as `prefetch` does; the first batch goes whatever the budget.
// Deleting the iterator never waits on a read: the reads not started are dropped, and one
// stalled in a system call (a hung network file system) ends alone, into the batch's tensors,
// which it keeps alive; the producer, where it was in such a read, is left to return from it.
//
// Checkpoints hold the input's state and the units of the batches in flight, never their data:
// restored, those units are read again. Under `experimental_symbolic_checkpoint` each batch
// carries the input's state as of its last unit (as `prefetch` does), and nothing else.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "npy_read.h"
#include "read_pool.h"
#include "tensorflow/core/framework/cancellation.h"
#include "tensorflow/core/framework/common_shape_fns.h"
#include "tensorflow/core/framework/dataset.h"
#include "tensorflow/core/framework/model.h"
#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/shape_inference.h"
#include "tensorflow/core/platform/env.h"
#include "tensorflow/core/data/captured_function.h"
#include "tensorflow/core/util/batch_util.h"

namespace {

using ::tensorflow::AttrValue;
using ::tensorflow::DataType;
using ::tensorflow::DataTypeVector;
using ::tensorflow::Node;
using ::tensorflow::OpKernelConstruction;
using ::tensorflow::OpKernelContext;
using ::tensorflow::PartialTensorShape;
using ::tensorflow::Tensor;
using ::tensorflow::TensorShape;
using ::tensorflow::tstring;
using ::tensorflow::data::CapturedFunction;
using ::tensorflow::data::DatasetBase;
using ::tensorflow::data::FunctionMetadata;
using ::tensorflow::data::InstantiatedCapturedFunction;
using ::tensorflow::data::DatasetContext;
using ::tensorflow::data::DatasetIterator;
using ::tensorflow::data::IteratorBase;
using ::tensorflow::data::IteratorContext;
using ::tensorflow::data::IteratorStateReader;
using ::tensorflow::data::IteratorStateWriter;
using ::tensorflow::data::MemoryCheckpoint;
using ::tensorflow::data::SerializationContext;
using ::tensorflow::data::UnaryDatasetOpKernel;

// Where a batch is read. One of fewer than kParallelFiles files and kParallelBytes bytes
// (npy_read.h) is read in the producer's thread: handing it to the pool would cost more than its
// reads, and the batches ahead already overlap the consumer. A larger one is cut into a task per
// core on the pool. Reads that wait on storage (a cold cache, a slow disk) turn on the pool's
// waiting mode (read_pool.h) for the next batches: every batch on the pool, cut into
// reads_in_flight tasks, whose reads then wait together. (bench/README.md, "The batch source",
// has the measurements.)
constexpr int64_t kParallelFiles = 32;

// Batches kept ahead of the consumer where `batches_ahead` is 0 (prefetch=AUTOTUNE): 2, and
// in waiting mode as many as keep twice reads_in_flight reads going (a batch of 8 units is
// only 8 tasks), up to kWaitingBytes of batches and within the RAM budget. Many small reads
// need the depth; large files fill the disk's queue with a few, and would only hold memory
// (4 MiB arrays, batches of 8: 1,144 MiB peak against 880 with 2 ahead, at the same rate).
constexpr int64_t kBatchesAhead = 2;
constexpr int64_t kWaitingBytes = int64_t{32} << 20;

// A part the dataset reads: the input component holding its paths, what every file holds (the
// plan's header, checked in Python), and the sizes that follow from it.
struct Part {
  int component;
  DataType dtype;
  TensorShape shape;
  std::string header;
  size_t payload;    // bytes of one file's array
  size_t file_size;  // header + payload
};

class Dataset : public DatasetBase {
 public:
  Dataset(OpKernelContext* ctx, const DatasetBase* input, int64_t batch_size,
          bool drop_remainder, std::vector<Part> parts, int64_t reads_in_flight,
          int64_t batches_ahead, bool deterministic, std::vector<int64_t> element,
          std::unique_ptr<CapturedFunction> fallback, DataTypeVector dtypes,
          std::vector<PartialTensorShape> shapes)
      : DatasetBase(DatasetContext(ctx)),
        input_(input),
        element_(std::move(element)),
        fallback_(std::move(fallback)),
        batch_size_(batch_size),
        drop_remainder_(drop_remainder),
        parts_(std::move(parts)),
        reads_in_flight_(reads_in_flight),
        batches_ahead_(batches_ahead),
        deterministic_(deterministic),
        dtypes_(std::move(dtypes)),
        shapes_(std::move(shapes)) {
    input_->Ref();
  }

  ~Dataset() override { input_->Unref(); }

  std::unique_ptr<IteratorBase> MakeIteratorInternal(const std::string& prefix) const override;

  const DataTypeVector& output_dtypes() const override { return dtypes_; }
  const std::vector<PartialTensorShape>& output_shapes() const override { return shapes_; }
  std::string DebugString() const override { return "NpyioBatchDatasetOp::Dataset"; }

  int64_t CardinalityInternal(tensorflow::data::CardinalityOptions options) const override {
    const int64_t n = input_->Cardinality(options);
    if (n < 0) return n;  // infinite or unknown
    return n / batch_size_ + (!drop_remainder_ && n % batch_size_ != 0 ? 1 : 0);
  }

  absl::Status InputDatasets(std::vector<const DatasetBase*>* inputs) const override {
    inputs->push_back(input_);
    return absl::OkStatus();
  }

  absl::Status CheckExternalState() const override {
    TF_RETURN_IF_ERROR(fallback_->CheckExternalState());
    return input_->CheckExternalState();
  }

 protected:
  absl::Status AsGraphDefInternal(SerializationContext* ctx, DatasetGraphDefBuilder* b,
                                  Node** output) const override {
    Node* input = nullptr;
    TF_RETURN_IF_ERROR(b->AddInputDataset(ctx, input_, &input));
    std::vector<Node*> other_arguments;
    DataTypeVector other_types;
    TF_RETURN_IF_ERROR(fallback_->AddToGraph(ctx, b, &other_arguments, &other_types));
    std::vector<int64_t> components;
    DataTypeVector dtypes;
    std::vector<PartialTensorShape> shapes;
    std::vector<std::string> headers;
    for (const Part& part : parts_) {
      components.push_back(part.component);
      dtypes.push_back(part.dtype);
      shapes.emplace_back(part.shape);
      headers.push_back(part.header);
    }
    AttrValue batch_size, drop_remainder, read_components, read_dtypes, read_shapes,
        read_headers, reads_in_flight, batches_ahead, deterministic, element, fallback,
        arguments;
    b->BuildAttrValue(element_, &element);
    b->BuildAttrValue(fallback_->func(), &fallback);
    b->BuildAttrValue(other_types, &arguments);
    b->BuildAttrValue(batch_size_, &batch_size);
    b->BuildAttrValue(drop_remainder_, &drop_remainder);
    b->BuildAttrValue(components, &read_components);
    b->BuildAttrValue(dtypes, &read_dtypes);
    b->BuildAttrValue(shapes, &read_shapes);
    b->BuildAttrValue(headers, &read_headers);
    b->BuildAttrValue(reads_in_flight_, &reads_in_flight);
    b->BuildAttrValue(batches_ahead_, &batches_ahead);
    b->BuildAttrValue(deterministic_, &deterministic);
    return b->AddDataset(this, {{0, input}}, {{1, other_arguments}},
                         {{"batch_size", batch_size},
                          {"element", element},
                          {"fallback", fallback},
                          {"Targuments", arguments},
                          {"drop_remainder", drop_remainder},
                          {"read_components", read_components},
                          {"read_dtypes", read_dtypes},
                          {"read_shapes", read_shapes},
                          {"read_headers", read_headers},
                          {"reads_in_flight", reads_in_flight},
                          {"batches_ahead", batches_ahead},
                          {"deterministic", deterministic}},
                         output);
  }

 private:
  class Iterator;

  const DatasetBase* const input_;
  const std::vector<int64_t> element_;
  const std::unique_ptr<CapturedFunction> fallback_;
  const int64_t batch_size_;
  const bool drop_remainder_;
  const std::vector<Part> parts_;
  const int64_t reads_in_flight_;
  const int64_t batches_ahead_;
  const bool deterministic_;
  const DataTypeVector dtypes_;
  const std::vector<PartialTensorShape> shapes_;
};

// One batch in flight: its units, and its output tensors once allocated.
struct Batch {
  explicit Batch(std::shared_ptr<MemoryCheckpoint::IdRegistry> registry)
      : checkpoint(std::move(registry)) {}

  std::vector<std::vector<Tensor>> units;
  std::vector<Tensor> outputs;
  absl::Status status;
  bool done = false;     // guarded by the iterator's mu_
  int64_t budgeted = 0;  // bytes it holds of the RAM budget (guarded by mu_)
  MemoryCheckpoint checkpoint;
};

class Dataset::Iterator : public DatasetIterator<Dataset> {
 public:
  explicit Iterator(const Params& params) : DatasetIterator<Dataset>(params) {}

  ~Iterator() override {
    if (deregister_) deregister_();
    Cancel();
    // Close drops the queued reads, waits for no read, and says whether the producer is in one.
    if (pool_ == nullptr || pool_->Close()) {
      if (producer_.joinable()) producer_.join();  // it checks cancelled_ between units
    } else {
      // Stalled in a read: it returns from it without touching this iterator (ReadHere says
      // closed), and ends alone.
      producer_.detach();
    }
    pool_.reset();
    // After the producer: it may have reserved bytes for a batch it never pushed (and one it
    // left in a read has pushed its batch first).
    std::lock_guard<std::mutex> lock(mu_);
    ReleaseBudget();
  }

  bool SymbolicCheckpointCompatible() const override { return true; }

  absl::Status Initialize(IteratorContext* ctx) override {
    auto plan = std::make_shared<std::vector<npyio::PartPlan>>();
    for (const Part& part : dataset()->parts_) {
      plan->push_back({part.header, part.payload, part.dtype == tensorflow::DT_BOOL});
    }
    plan_ = std::move(plan);
    // tf.data's runner (a private thread pool's size where the options set one) and the
    // pipeline's RAM budget, both given by the root of the pipeline
    cpu_tasks_ = std::max<int64_t>(1, ctx->runner_threadpool_size());
    ram_budget_ = ctx->ram_budget_manager();
    pool_ = std::make_unique<npyio::ReadPool>(
        static_cast<int>(std::max(dataset()->reads_in_flight_, cpu_tasks_)));
    // The iterator's cancellation (its owner deleted, as `prefetch` after this op is) wakes a
    // GetNext waiting on a batch, which may wait on a stalled read.
    TF_RETURN_IF_ERROR(tensorflow::RegisterCancellationCallback(
        ctx->cancellation_manager(), [this] { Cancel(); }, &deregister_));
    TF_RETURN_IF_ERROR(dataset()->fallback_->Instantiate(ctx, &fallback_));
    return dataset()->input_->MakeIterator(ctx, this, prefix(), &input_);
  }

  absl::Status GetNextInternal(IteratorContext* ctx, std::vector<Tensor>* out,
                               bool* end_of_sequence) override {
    std::shared_ptr<Batch> batch;
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (!producer_.joinable()) {
        // A thread of its own, not ctx->StartThread's: the iterator resource joins those when
        // it ends, which would wait on a stalled read.
        try {
          producer_ = std::thread(
              [this, shared = std::make_shared<IteratorContext>(*ctx)] { Produce(shared); });
        } catch (const std::system_error& e) {
          return absl::ResourceExhaustedError(
              absl::StrCat("NpyioBatchDataset: could not start its thread: ", e.what()));
        }
      }
      const bool in_order = dataset()->deterministic_ || ctx->symbolic_checkpoint();
      auto next = buffer_.end();
      ready_.wait(lock, [&] {
        next = Next(in_order);
        return cancelled_ || next != buffer_.end() || (buffer_.empty() && finished_);
      });
      if (cancelled_) return absl::CancelledError("NpyioBatchDataset: iterator deleted");
      if (buffer_.empty()) {
        *end_of_sequence = true;
        return absl::OkStatus();
      }
      batch = std::move(*next);
      buffer_.erase(next);
      Release(*batch);
    }
    room_.notify_one();  // room for the producer
    *end_of_sequence = false;
    ctx->MergeCheckpoint(&batch->checkpoint);
    if (!batch->status.ok()) return batch->status;
    return Settle(ctx, *batch, out);
  }

 protected:
  std::shared_ptr<tensorflow::data::model::Node> CreateNode(
      IteratorContext* ctx, tensorflow::data::model::Node::Args args) const override {
    return tensorflow::data::model::MakeKnownRatioNode(std::move(args),
                                                       dataset()->batch_size_);
  }

  absl::Status SaveInternal(SerializationContext* ctx, IteratorStateWriter* writer) override {
    // Both locks: the producer is between units, and no batch is taken meanwhile.
    std::lock_guard<std::mutex> input_lock(input_mu_);
    std::lock_guard<std::mutex> lock(mu_);
    TF_RETURN_IF_ERROR(writer->WriteScalar(prefix(), "symbolic",
                                           static_cast<int64_t>(ctx->symbolic_checkpoint())));
    if (ctx->symbolic_checkpoint()) return absl::OkStatus();  // the batches carry the input's
    TF_RETURN_IF_ERROR(SaveInput(ctx, writer, input_));
    TF_RETURN_IF_ERROR(writer->WriteScalar(prefix(), "finished", static_cast<int64_t>(finished_)));
    TF_RETURN_IF_ERROR(
        writer->WriteScalar(prefix(), "batches", static_cast<int64_t>(buffer_.size())));
    for (size_t i = 0; i < buffer_.size(); ++i) {
      const Batch& batch = *buffer_[i];
      const std::string key = absl::StrCat("batch_", i);
      TF_RETURN_IF_ERROR(writer->WriteScalar(prefix(), absl::StrCat(key, "_code"),
                                             static_cast<int64_t>(batch.status.raw_code())));
      if (!batch.status.ok()) {
        TF_RETURN_IF_ERROR(writer->WriteScalar(prefix(), absl::StrCat(key, "_message"),
                                               tstring(std::string(batch.status.message()))));
        continue;
      }
      TF_RETURN_IF_ERROR(writer->WriteScalar(prefix(), absl::StrCat(key, "_units"),
                                             static_cast<int64_t>(batch.units.size())));
      for (size_t u = 0; u < batch.units.size(); ++u) {
        for (size_t c = 0; c < batch.units[u].size(); ++c) {
          TF_RETURN_IF_ERROR(writer->WriteTensor(prefix(), absl::StrCat(key, "_", u, "_", c),
                                                 batch.units[u][c]));
        }
      }
    }
    return absl::OkStatus();
  }

  absl::Status RestoreInternal(IteratorContext* ctx, IteratorStateReader* reader) override {
    std::vector<std::pair<std::shared_ptr<Batch>, std::shared_ptr<npyio::BatchRead>>> again;
    TF_RETURN_IF_ERROR(RestoreBuffer(ctx, reader, &again));
    // Their units, read again: on the pool (only the producer reads in its own thread).
    for (auto& [batch, read] : again) {
      pool_->Submit(std::move(read), cpu_tasks_, [this, batch = batch] { Done(*batch); });
    }
    return absl::OkStatus();
  }

 private:
  // The batch to deliver now, or end() while none may go: the first in flight once read; out
  // of order, any read full batch that read well (a short or failed one keeps its place).
  std::deque<std::shared_ptr<Batch>>::iterator Next(bool in_order) {
    if (buffer_.empty() || buffer_.front()->done || in_order) {
      return !buffer_.empty() && buffer_.front()->done ? buffer_.begin() : buffer_.end();
    }
    for (auto it = buffer_.begin(); it != buffer_.end(); ++it) {
      const Batch& b = **it;
      if (b.done && b.status.ok() &&
          static_cast<int64_t>(b.units.size()) == dataset()->batch_size_) {
        return it;
      }
    }
    return buffer_.end();
  }

  // The batches to keep in flight: `batches_ahead`, or where it is 0, kBatchesAhead and in
  // waiting mode enough for twice reads_in_flight tasks, up to kWaitingBytes. Under mu_.
  int64_t Ahead() const {
    const Dataset& d = *dataset();
    if (d.batches_ahead_ > 0) return d.batches_ahead_;
    if (!waiting_.load(std::memory_order_relaxed)) return kBatchesAhead;
    const int64_t tasks = std::min(d.batch_size_, d.reads_in_flight_);  // one a unit at most
    int64_t deep = (2 * d.reads_in_flight_ + tasks - 1) / tasks;
    if (batch_bytes_ > 0) deep = std::min(deep, kWaitingBytes / batch_bytes_);
    return std::max(kBatchesAhead, deep);
  }

  // Whether one more batch may go ahead of the first in flight: it fits in the RAM budget, and
  // then holds its bytes (sized as the last full batch) until it is delivered. Under mu_.
  bool Budgeted() {
    if (ram_budget_ == nullptr || batch_bytes_ == 0) return true;
    if (!ram_budget_->RequestLegacyPrefetchBytes(batch_bytes_)) return false;
    reserved_ = batch_bytes_;
    return true;
  }

  // Gives a batch's bytes back to the RAM budget. Under mu_.
  void Release(Batch& batch) {
    if (batch.budgeted > 0) ram_budget_->RequestLegacyPrefetchBytes(-batch.budgeted);
    batch.budgeted = 0;
  }

  // Gives back every batch's bytes and any reserved for the next. Under mu_.
  void ReleaseBudget() {
    for (auto& batch : buffer_) Release(*batch);
    if (reserved_ > 0) ram_budget_->RequestLegacyPrefetchBytes(-reserved_);
    reserved_ = 0;
  }

  void Cancel() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      cancelled_ = true;
    }
    cancelled_flag_ = true;
    ready_.notify_all();
    room_.notify_all();
  }

  // The input's state and the batches in flight as saved, prepared; `again` gets those to read
  // again, with their reads.
  absl::Status RestoreBuffer(
      IteratorContext* ctx, IteratorStateReader* reader,
      std::vector<std::pair<std::shared_ptr<Batch>, std::shared_ptr<npyio::BatchRead>>>* again) {
    std::lock_guard<std::mutex> input_lock(input_mu_);
    std::lock_guard<std::mutex> lock(mu_);
    ReleaseBudget();
    buffer_.clear();
    int64_t symbolic = 0;
    TF_RETURN_IF_ERROR(reader->ReadScalar(prefix(), "symbolic", &symbolic));
    TF_RETURN_IF_ERROR(RestoreInput(ctx, reader, input_));
    if (symbolic) return absl::OkStatus();
    int64_t finished = 0, batches = 0;
    TF_RETURN_IF_ERROR(reader->ReadScalar(prefix(), "finished", &finished));
    TF_RETURN_IF_ERROR(reader->ReadScalar(prefix(), "batches", &batches));
    finished_ = finished != 0;
    const size_t components = dataset()->input_->output_dtypes().size();
    for (int64_t i = 0; i < batches; ++i) {
      auto batch = std::make_shared<Batch>(ctx->id_registry());
      const std::string key = absl::StrCat("batch_", i);
      int64_t code = 0;
      TF_RETURN_IF_ERROR(reader->ReadScalar(prefix(), absl::StrCat(key, "_code"), &code));
      if (code != 0) {
        tstring message;
        TF_RETURN_IF_ERROR(
            reader->ReadScalar(prefix(), absl::StrCat(key, "_message"), &message));
        batch->status = absl::Status(static_cast<absl::StatusCode>(code),
                                     std::string(message.data(), message.size()));
        batch->done = true;
        buffer_.push_back(std::move(batch));
        continue;
      }
      int64_t units = 0;
      TF_RETURN_IF_ERROR(reader->ReadScalar(prefix(), absl::StrCat(key, "_units"), &units));
      batch->units.resize(units);
      for (int64_t u = 0; u < units; ++u) {
        batch->units[u].resize(components);
        for (size_t c = 0; c < components; ++c) {
          TF_RETURN_IF_ERROR(reader->ReadTensor(ctx->flr(), prefix(),
                                                absl::StrCat(key, "_", u, "_", c),
                                                &batch->units[u][c]));
        }
      }
      auto read = Prepare(ctx, *batch);
      batch->done = read == nullptr;
      buffer_.push_back(batch);
      if (read != nullptr) again->emplace_back(std::move(batch), std::move(read));
    }
    return absl::OkStatus();
  }

  // The producer: pulls each batch's units from the input while fewer than batches_ahead are
  // in flight, and starts their reads.
  void Produce(const std::shared_ptr<IteratorContext>& ctx) {
    const Dataset& d = *dataset();
    while (true) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        room_.wait(lock, [&] {
          return cancelled_ || finished_ || buffer_.empty() ||
                 (static_cast<int64_t>(buffer_.size()) < Ahead() && Budgeted());
        });
        if (cancelled_ || finished_) return;
      }
      auto batch = std::make_shared<Batch>(ctx->id_registry());
      std::shared_ptr<npyio::BatchRead> read;  // its reads, once the batch is in the buffer
      bool end = false;
      {
        // The input lock is held until the batch is in the buffer, so that a checkpoint never
        // sees units pulled but in no batch.
        std::lock_guard<std::mutex> input_lock(input_mu_);
        while (static_cast<int64_t>(batch->units.size()) < d.batch_size_ && !end) {
          if (cancelled_flag_.load(std::memory_order_relaxed)) return;
          std::vector<Tensor> unit;
          batch->status = input_->GetNext(ctx.get(), &unit, &end);
          batch->checkpoint.Merge(ctx->checkpoint());
          if (!batch->status.ok()) break;
          if (end) break;
          batch->units.push_back(std::move(unit));
        }
        const bool short_batch = static_cast<int64_t>(batch->units.size()) < d.batch_size_;
        const bool keep = !batch->status.ok() ||
                          (!batch->units.empty() && !(short_batch && d.drop_remainder_));
        if (keep) read = Prepare(ctx.get(), *batch);
        std::lock_guard<std::mutex> lock(mu_);
        if (end) finished_ = true;
        if (!short_batch) batch_bytes_ = std::max(batch_bytes_, Bytes(*batch));
        if (keep) {
          batch->done = read == nullptr;
          batch->budgeted = std::exchange(reserved_, 0);
          buffer_.push_back(batch);
        } else if (reserved_ > 0) {
          ram_budget_->RequestLegacyPrefetchBytes(-std::exchange(reserved_, 0));
        }
      }
      // (a batch still to read is nothing to its consumer yet)
      if (read == nullptr || end) ready_.notify_all();
      // No lock is held here: a read in this thread may stall past the iterator's end.
      if (read != nullptr && !Read(batch, std::move(read))) return;  // the iterator is gone
      if (end) return;
    }
  }

  // The element of a read batch: its outputs, each part's values sent through the fallback
  // (the graph path) where the core doubted a file, then the entries `element` names.
  absl::Status Settle(IteratorContext* ctx, Batch& batch, std::vector<Tensor>* out) {
    const Dataset& d = *dataset();
    std::vector<Tensor>& outputs = batch.outputs;
    const size_t components = outputs.size() - 2 * d.parts_.size();
    bool doubted = false;
    for (size_t p = 0; p < d.parts_.size() && !doubted; ++p) {
      auto oks = outputs[components + 2 * p + 1].flat<bool>();
      for (int64_t i = 0; i < oks.size(); ++i) doubted = doubted || !oks(i);
    }
    std::vector<Tensor> full(outputs.begin(), outputs.begin() + components);
    if (doubted) {
      std::vector<Tensor> settled;
      TF_RETURN_IF_ERROR(fallback_->Run(ctx, std::move(outputs), &settled));
      if (settled.size() != d.parts_.size()) {
        return absl::InternalError("NpyioBatchDataset: the fallback gave another part count");
      }
      for (Tensor& values : settled) full.push_back(std::move(values));
    } else {
      for (size_t p = 0; p < d.parts_.size(); ++p) {
        full.push_back(std::move(outputs[components + 2 * p]));
      }
    }
    out->clear();
    for (int64_t i : d.element_) out->push_back(full[i]);
    return absl::OkStatus();
  }

  // Allocates the batch's outputs and gives its reads, or null where it has none: it failed
  // (its input, or its allocation), or it has nothing to read. Under input_mu_ (restore's, or
  // the producer's), so that a checkpoint sees its status whole.
  std::shared_ptr<npyio::BatchRead> Prepare(IteratorContext* ctx, Batch& batch) {
    const Dataset& d = *dataset();
    const size_t n = batch.units.size();
    if (!batch.status.ok() || n == 0) return nullptr;
    try {
      batch.status = Assemble(ctx, batch);
    } catch (const std::bad_alloc&) {
      batch.status = absl::ResourceExhaustedError(
          absl::StrCat("NpyioBatchDataset: out of memory for a batch of ", n, " units"));
    }
    if (!batch.status.ok() || d.parts_.empty()) return nullptr;
    const size_t components = batch.units[0].size();
    // The parts' tensors stay alive while a read may write into them, past this batch if the
    // iterator ends mid-read.
    auto keep = std::make_shared<std::vector<Tensor>>(batch.outputs.begin() + components,
                                                      batch.outputs.end());
    auto read = std::make_shared<npyio::BatchRead>(plan_, n, keep);
    for (size_t p = 0; p < d.parts_.size(); ++p) {
      const Part& part = d.parts_[p];
      Tensor& values = batch.outputs[components + 2 * p];
      bool* oks = batch.outputs[components + 2 * p + 1].flat<bool>().data();
      // no rows allocated (no file of the plan's size: SomeFileFits): every file doubted, unread
      const bool room = values.dim_size(0) > 0;
      for (size_t i = 0; i < n; ++i) {
        npyio::FileRead& file = read->file(i, p);
        // A path with a scheme (gs://, ...) is the graph path's: this op reads local files.
        if (room) file.path = LocalPath(batch.units[i][part.component]);
        file.out = !room || part.payload == 0
                       ? nullptr
                       : static_cast<uint8_t*>(values.data()) + i * part.payload;
        file.ok = oks + i;
      }
    }
    return read;
  }

  // The bytes a batch's outputs hold.
  static int64_t Bytes(const Batch& batch) {
    int64_t bytes = 0;
    for (const Tensor& t : batch.outputs) bytes += static_cast<int64_t>(t.TotalBytes());
    return bytes;
  }

  // Reads a prepared batch: on the pool, cut into a task per runner thread (reads_in_flight
  // tasks in waiting mode), or, small, in this thread. False where the iterator ended while
  // this thread read: it is then gone, and nothing of it may be touched.
  bool Read(const std::shared_ptr<Batch>& batch, std::shared_ptr<npyio::BatchRead> read) {
    const bool waiting = pool_->TakeWaiting();
    waiting_.store(waiting, std::memory_order_relaxed);
    if (waiting || !Small(static_cast<int64_t>(read->units()))) {
      pool_->Submit(std::move(read), waiting ? dataset()->reads_in_flight_ : cpu_tasks_,
                    [this, batch] { Done(*batch); });
      return true;
    }
    if (!pool_->ReadHere(read)) return false;
    Done(*batch);
    return true;
  }

  void Done(Batch& batch) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      batch.done = true;
    }
    ready_.notify_all();
  }

  // Whether a batch of n units is small enough to read in the producer's thread.
  bool Small(int64_t n) const {
    size_t unit = 0;
    for (const Part& part : dataset()->parts_) unit += part.payload;
    const size_t files = static_cast<size_t>(n) * dataset()->parts_.size();
    return files < static_cast<size_t>(kParallelFiles) &&
           !npyio::reaches(n, unit, npyio::kParallelBytes);
  }

  // The batch's outputs: each input component stacked, then per part its values and ok.
  absl::Status Assemble(IteratorContext* ctx, Batch& batch) {
    const Dataset& d = *dataset();
    const int64_t n = static_cast<int64_t>(batch.units.size());
    const size_t components = batch.units[0].size();
    batch.outputs.reserve(components + 2 * d.parts_.size());
    for (size_t c = 0; c < components; ++c) {
      TensorShape shape({n});
      TF_RETURN_IF_ERROR(shape.AppendShapeWithStatus(batch.units[0][c].shape()));
      Tensor stacked(ctx->allocator({}), batch.units[0][c].dtype(), shape);
      for (int64_t i = 0; i < n; ++i) {
        // A second reference: CopyElementToSlice moves the strings out of an element whose
        // buffer it alone holds, and the units must keep theirs (a checkpoint saves them).
        const Tensor unit = batch.units[i][c];
        TF_RETURN_IF_ERROR(tensorflow::batch_util::CopyElementToSlice(unit, &stacked, i));
      }
      batch.outputs.push_back(std::move(stacked));
    }
    for (const Part& part : d.parts_) {
      if (part.component < 0 || static_cast<size_t>(part.component) >= components ||
          batch.units[0][part.component].dtype() != tensorflow::DT_STRING) {
        return absl::InvalidArgumentError(absl::StrCat(
            "NpyioBatchDataset: component ", part.component, " is not a string of paths"));
      }
      const int64_t rows = SomeFileFits(batch, part) ? n : 0;
      TensorShape shape({rows});
      TF_RETURN_IF_ERROR(shape.AppendShapeWithStatus(part.shape));
      Tensor values(ctx->allocator({}), part.dtype, shape);
      if (!values.IsInitialized()) {
        return absl::ResourceExhaustedError(absl::StrCat(
            "NpyioBatchDataset: could not allocate a batch of ", shape.DebugString()));
      }
      Tensor ok(ctx->allocator({}), tensorflow::DT_BOOL, TensorShape({n}));
      auto oks = ok.flat<bool>();
      for (int64_t i = 0; i < n; ++i) oks(i) = false;
      batch.outputs.push_back(std::move(values));
      batch.outputs.push_back(std::move(ok));
    }
    return absl::OkStatus();
  }

  // The unit's path as the core opens it, or "" where the core doubts it (npy_read.h).
  static std::string LocalPath(const Tensor& unit) {
    const tstring& name = unit.scalar<tstring>()();
    return npyio::local_path({name.data(), name.size()});
  }

  // Whether a batch of n * payload >= kCheckedBytes (npy_read.h) may be allocated: some file
  // of it has exactly the plan's size (a header that lied about the shape allocates nothing).
  static bool SomeFileFits(const Batch& batch, const Part& part) {
    if (!npyio::reaches(batch.units.size(), part.payload, npyio::kCheckedBytes)) return true;
    for (const auto& unit : batch.units) {
      const std::string path = LocalPath(unit[part.component]);
      if (!path.empty() && npyio::has_size(path.c_str(), part.file_size)) return true;
    }
    return false;
  }

  std::mutex input_mu_;  // held while the input is read or saved; taken before mu_
  std::mutex mu_;
  // Two waits, so that each wakes only its waiter (a futex wake costs more than a batch of
  // small files): the consumer's for a batch read (or the end), the producer's for room.
  std::condition_variable ready_;
  std::condition_variable room_;
  std::unique_ptr<IteratorBase> input_;
  std::unique_ptr<InstantiatedCapturedFunction> fallback_;
  std::deque<std::shared_ptr<Batch>> buffer_;  // the batches in flight, in order
  bool finished_ = false;                      // the input has ended
  bool cancelled_ = false;
  std::atomic<bool> cancelled_flag_{false};
  std::atomic<bool> waiting_{false};  // the last batch went out in waiting mode
  // a batch's tasks outside waiting mode: tf.data's runner threads (set in Initialize)
  int64_t cpu_tasks_ = 1;
  // the pipeline's RAM budget (null outside a pipeline's root), the bytes of a full batch,
  // and those reserved for the batch being pulled (guarded by mu_)
  std::shared_ptr<tensorflow::data::model::RamBudgetManager> ram_budget_;
  int64_t batch_bytes_ = 0;
  int64_t reserved_ = 0;
  std::thread producer_;
  std::shared_ptr<const std::vector<npyio::PartPlan>> plan_;  // the parts, for the reads
  std::unique_ptr<npyio::ReadPool> pool_;
  std::function<void()> deregister_;  // of the cancellation callback
};

std::unique_ptr<IteratorBase> Dataset::MakeIteratorInternal(const std::string& prefix) const {
  return std::make_unique<Iterator>(
      Iterator::Params{this, absl::StrCat(prefix, "::NpyioBatch")});
}

class NpyioBatchDatasetOp : public UnaryDatasetOpKernel {
 public:
  explicit NpyioBatchDatasetOp(OpKernelConstruction* ctx) : UnaryDatasetOpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("batch_size", &batch_size_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("drop_remainder", &drop_remainder_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("reads_in_flight", &reads_in_flight_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("batches_ahead", &batches_ahead_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("deterministic", &deterministic_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("output_types", &dtypes_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("output_shapes", &shapes_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("element", &element_));
    // (with use_inter_op_parallelism off, the graph path's functional ops, which wait on
    // work they hand to the runner, hang: its default, as Dataset.map's)
    OP_REQUIRES_OK(ctx,
                   FunctionMetadata::Create(ctx, "fallback", FunctionMetadata::Params(), &fallback_));
    std::vector<int64_t> components;
    DataTypeVector dtypes;
    std::vector<PartialTensorShape> shapes;
    std::vector<std::string> headers;
    OP_REQUIRES_OK(ctx, ctx->GetAttr("read_components", &components));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("read_dtypes", &dtypes));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("read_shapes", &shapes));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("read_headers", &headers));
    OP_REQUIRES(ctx,
                components.size() == dtypes.size() && dtypes.size() == shapes.size() &&
                    shapes.size() == headers.size(),
                absl::InvalidArgumentError(
                    "NpyioBatchDataset: read_components, read_dtypes, read_shapes and "
                    "read_headers must have one entry per part read"));
    for (size_t p = 0; p < components.size(); ++p) {
      Part part{static_cast<int>(components[p]), dtypes[p], TensorShape(), headers[p], 0, 0};
      OP_REQUIRES(ctx, shapes[p].AsTensorShape(&part.shape),
                  absl::InvalidArgumentError(absl::StrCat(
                      "NpyioBatchDataset: read_shapes[", p, "] must be fully defined, got ",
                      shapes[p].DebugString())));
      OP_REQUIRES(ctx, part.header.size() <= npyio::kMaxHeader,
                  absl::InvalidArgumentError("NpyioBatchDataset: a header is too long"));
      const int size = tensorflow::DataTypeSize(part.dtype);
      int64_t payload = 0, file_size = 0;
      // The file's bytes must fit in int64 (an off_t), or a file of another size would be
      // read as this one; a [B, *shape] batch must too (checked per batch, by TensorShape).
      OP_REQUIRES(ctx,
                  size > 0 &&
                      !__builtin_mul_overflow(part.shape.num_elements(),
                                              static_cast<int64_t>(size), &payload) &&
                      !__builtin_add_overflow(payload,
                                              static_cast<int64_t>(part.header.size()),
                                              &file_size),
                  absl::InvalidArgumentError(absl::StrCat(
                      "NpyioBatchDataset: read_shapes[", p, "] ", part.shape.DebugString(),
                      " of ", tensorflow::DataTypeString(part.dtype),
                      " has no fixed size or passes 2**63 - 1 bytes")));
      part.payload = static_cast<size_t>(payload);
      part.file_size = static_cast<size_t>(file_size);
      parts_.push_back(std::move(part));
    }
  }

 protected:
  void MakeDataset(OpKernelContext* ctx, DatasetBase* input, DatasetBase** output) override {
    const size_t components = input->output_dtypes().size();
    OP_REQUIRES(ctx, dtypes_.size() == element_.size(),
                absl::InvalidArgumentError(absl::StrCat(
                    "NpyioBatchDataset: output_types has ", dtypes_.size(),
                    " entries, for an element of ", element_.size())));
    for (int64_t i : element_) {
      OP_REQUIRES(ctx, i >= 0 && static_cast<size_t>(i) < components + parts_.size(),
                  absl::InvalidArgumentError(absl::StrCat(
                      "NpyioBatchDataset: element names entry ", i, " of ",
                      components + parts_.size())));
    }
    std::unique_ptr<CapturedFunction> fallback;
    OP_REQUIRES_OK(ctx, CapturedFunction::Create(ctx, fallback_, "other_arguments", &fallback));
    for (const Part& part : parts_) {
      OP_REQUIRES(ctx,
                  part.component >= 0 && static_cast<size_t>(part.component) < components &&
                      input->output_dtypes()[part.component] == tensorflow::DT_STRING,
                  absl::InvalidArgumentError(absl::StrCat(
                      "NpyioBatchDataset: read_components names component ", part.component,
                      ", which is not a string of the input's ", components)));
    }
    *output = new Dataset(ctx, input, batch_size_, drop_remainder_, parts_, reads_in_flight_,
                          batches_ahead_, deterministic_, element_, std::move(fallback),
                          dtypes_, shapes_);
  }

 private:
  int64_t batch_size_ = 0;
  bool drop_remainder_ = false;
  int64_t reads_in_flight_ = 1;
  int64_t batches_ahead_ = 1;
  bool deterministic_ = true;
  DataTypeVector dtypes_;
  std::vector<PartialTensorShape> shapes_;
  std::vector<Part> parts_;
  std::vector<int64_t> element_;
  std::shared_ptr<FunctionMetadata> fallback_;
};

REGISTER_OP("NpyioBatchDataset")
    .Input("input_dataset: variant")
    .Input("other_arguments: Targuments")
    .Output("handle: variant")
    .Attr("fallback: func")
    .Attr("Targuments: list(type) >= 0")
    .Attr("element: list(int) >= 1")
    .Attr("batch_size: int >= 1")
    .Attr("drop_remainder: bool")
    .Attr("read_components: list(int) >= 0")
    .Attr("read_dtypes: list(type) >= 0")
    .Attr("read_shapes: list(shape) >= 0")
    .Attr("read_headers: list(string) >= 0")
    .Attr("reads_in_flight: int >= 1")
    .Attr("batches_ahead: int >= 0")
    .Attr("deterministic: bool = true")
    .Attr("output_types: list(type) >= 1")
    .Attr("output_shapes: list(shape) >= 1")
    .SetShapeFn(tensorflow::shape_inference::ScalarShape);

REGISTER_KERNEL_BUILDER(Name("NpyioBatchDataset").Device(tensorflow::DEVICE_CPU),
                        NpyioBatchDatasetOp);

}  // namespace
