// A TensorFlow-free driver over the core (npy_read.cc), with two modes:
//
//   driver fuzz SECONDS DIR [SEED]    damaged and racing files through read_npy, checking its
//                                     invariant; a sample of damaged files and the verdicts go
//                                     to DIR/cases (verdicts.tsv) for the differential check
//                                     against the graph path (tests/fuzz/native.py)
//   driver bench THREADS [LIST]       read the .npy files listed in LIST (or on stdin), one
//                                     path a line, all of one header, with THREADS threads;
//                                     prints files/s and bytes/s: the kernel's own read loop
//   driver windows THREADS SIZES [LIST]
//                                     a random window (SIZES: its size on each leading axis,
//                                     comma-separated) of each .npy file listed in LIST (or on
//                                     stdin), the files of a line (tab-separated: an image and its
//                                     mask) sharing its draws, each file's own header parsed
//                                     (read_window_placed, NpyioReadWindows' read), with THREADS
//                                     threads; prints windows/s: the kernel's own crop loop
//   driver headers MAX IN OUT         parse_header (npy_header.h) on each file head in IN (a
//                                     4-byte little-endian length, then the bytes), with the
//                                     header text limited to MAX bytes; one verdict a line in
//                                     OUT, for the differential check (tests/fuzz/headers.py)
//
// The invariant: read_npy is OK exactly when the file is a regular file of exactly
// header_len + payload_len bytes that starts with the expected header and, for bools, whose
// payload bytes are 0 or 1; and when it is OK the output is the file's payload. Racing files
// (another thread truncating, rewriting or replacing the file during the read) must never give
// OK with bytes the file never held. Each non-racing input is also read by read_range (a random
// range, of the recorded size or another), OK exactly when the file is regular, of that size,
// and holds the range, and then the output is its bytes; and checked in memory by check_npy
// (remote objects' check), with the oracle's verdict. And by read_window: a random window
// (past the edges, negative, empty, or of values near INT64_MAX) of the recorded shape or
// another, BAD_WINDOW exactly when its arithmetic is invalid, OK exactly when the window is
// valid and the file is good (regular, of the shape's size, the header, bools 0 or 1 where the
// window reads), and then the output is the slice of a whole read of the file, padded with the
// fill; racing files read through a window give the bytes A or B hold there. read_window's
// bounce buffer never outlives its call (bounce_bytes_held() is 0 after each). By
// read_npy_parsed (a file of any shape, its own header parsed): its allocator asked only for a
// file of exactly the parsed header plus its payload, an intact file of the wanted shape OK, and
// OK only with the file's payload for a shape that fits the wanted one. By read_window_placed
// (a window placed by the file's own dims) with the same want: past the header exactly where
// read_npy_parsed is, with its dims, then read_window_parsed's verdict and bytes at the start
// place_window gives (random, centred or fixed, under each policy; draws not finite, negative
// or of another count doubted). read_range_into
// (the op's range read, which allocates once the file is checked) on every input and on racing
// files: its allocator is asked exactly when read_range would be OK but for the bytes, for
// exactly the range's length, and sometimes fails (NO_MEMORY, nothing written); racing, an OK
// range holds bytes the file held. read_rows (the op's rows of files numbered as one sequence)
// on every non-racing input: each run's verdict and bytes as the arithmetic and the file say,
// swapped where asked, nothing written past the runs. And, every 256 inputs, threads racing for a ByteBudget (the
// remote reads' buffers, budget.h): the bytes held never pass its limit (but for one request
// larger than it, alone), and each acquire gets its bytes back. And, as often, a ReadPool
// (read_pool.h, NpyioBatchDataset's reads) racing and cancelled: good and damaged files, some
// whose reads stall, read on the pool and in a caller's thread, the pool closed at a random
// point (see race_pool). And the header cache, with files read on threads at once and rewritten
// between (see race_kept). A read itself has no cancellation (it runs to its end, bounded by one
// preadv per run); the pool's Close is what is cancelled. Exit status 1 on the first violation.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "budget.h"
#include "npy_header.h"
#include "npy_read.h"
#include "read_pool.h"

namespace {

using Bytes = std::vector<uint8_t>;

struct Kind {
  const char* descr;
  size_t size;
  bool is_bool;
};

const Kind kKinds[] = {{"|b1", 1, true},  {"|u1", 1, false}, {"<i2", 2, false},
                       {"<f2", 2, false}, {"<f4", 4, false}, {"<u8", 8, false},
                       {"<f8", 8, false}, {"<c8", 8, false}, {"<c16", 16, false}};

// A version 1.0 header as numpy writes it: magic, version, length, the dict padded to 64.
Bytes make_header(const Kind& kind, const std::vector<size_t>& shape) {
  std::string dict = std::string("{'descr': '") + kind.descr + "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < shape.size(); ++i) {
    dict += std::to_string(shape[i]);
    if (i + 1 < shape.size() || shape.size() == 1) dict += ",";
    if (i + 1 < shape.size()) dict += " ";
  }
  dict += "), }";
  size_t total = 10 + dict.size() + 1;
  size_t pad = (64 - total % 64) % 64;
  dict += std::string(pad, ' ') + "\n";
  Bytes h = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  h.push_back(static_cast<uint8_t>(dict.size() & 0xff));
  h.push_back(static_cast<uint8_t>(dict.size() >> 8));
  h.insert(h.end(), dict.begin(), dict.end());
  return h;
}

bool write_file(const std::string& path, const Bytes& data) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n <= 0) {
      close(fd);
      return false;
    }
    done += static_cast<size_t>(n);
  }
  close(fd);
  return true;
}

// What read_npy must say of a regular file holding `file`.
bool expect_ok(const Bytes& file, const Bytes& header, size_t payload, bool is_bool) {
  if (file.size() != header.size() + payload) return false;
  if (std::memcmp(file.data(), header.data(), header.size()) != 0) return false;
  if (is_bool) {
    for (size_t i = header.size(); i < file.size(); ++i) {
      if (file[i] > 1) return false;
    }
  }
  return true;
}

enum Damage {
  NONE, FLIP_HEADER, FLIP_PAYLOAD, INSERT, REMOVE, TRUNCATE, GROW, BOOL_BYTE,
  DIRECTORY, FIFO, MISSING, RACE_TRUNCATE, RACE_REWRITE, RACE_RENAME, DAMAGES
};
const char* kDamageNames[] = {"none", "flip_header", "flip_payload", "insert", "remove",
                              "truncate", "grow", "bool_byte", "directory", "fifo",
                              "missing", "race_truncate", "race_rewrite", "race_rename"};


// The header text's limit the driver reads under (npyio's default max_header_size).
constexpr size_t kMaxHeaderText = 10000;

// A window's arithmetic as read_window must judge it, computed another way (saturating
// products in 128 bits): whether it is valid, and its output's size in bytes.
struct WindowCase {
  std::vector<int64_t> shape, start, window;
  size_t itemsize;
  const char* code;  // the dtype's grammar code ("f4"), which the file's header must name
  Bytes fill;  // empty: zeros

  static int64_t product(const std::vector<int64_t>& dims, size_t unit, bool* fits) {
    __int128 p = static_cast<__int128>(unit);
    bool zero = false;
    for (int64_t d : dims) zero = zero || d == 0;
    if (zero) return 0;
    for (int64_t d : dims) {
      p *= d;
      if (p > INT64_MAX) {
        *fits = false;
        return 0;
      }
    }
    return static_cast<int64_t>(p);
  }

  bool valid(size_t header_len, int64_t* payload, int64_t* out_bytes) const {
    bool fits = true;
    for (size_t i = 0; i < shape.size(); ++i) {
      const __int128 end = static_cast<__int128>(start[i]) + window[i];
      fits = fits && shape[i] >= 0 && window[i] >= 0 && end <= INT64_MAX;
    }
    if (!fits) return false;
    *payload = product(shape, itemsize, &fits);
    *out_bytes = product(window, itemsize, &fits);
    return fits && static_cast<__int128>(*payload) + header_len <= INT64_MAX;
  }

  // The window cut from a whole file's payload (`data`), elements outside the array filled.
  Bytes reference(const uint8_t* data, size_t out_bytes) const {
    Bytes out(out_bytes);
    const size_t rank = shape.size();
    std::vector<int64_t> idx(rank, 0);
    for (size_t at = 0; at < out_bytes; at += itemsize) {
      bool inside = true;
      uint64_t offset = 0;  // meaningful only inside (then below the element count); wraps else
      for (size_t i = 0; i < rank; ++i) {
        const int64_t c = start[i] + idx[i];
        inside = inside && c >= 0 && c < shape[i];
        offset = offset * static_cast<uint64_t>(shape[i]) + static_cast<uint64_t>(inside ? c : 0);
      }
      for (size_t b = 0; b < itemsize; ++b) {
        out[at + b] = inside ? data[offset * itemsize + b] : fill.empty() ? 0 : fill[b];
      }
      for (size_t i = rank; i-- > 0;) {
        if (++idx[i] < window[i]) break;
        idx[i] = 0;
      }
    }
    return out;
  }

  // Whether every element of the window's intersection with the array is 0 or 1.
  bool bools_ok(const uint8_t* data, size_t out_bytes) const {
    WindowCase zero_filled = *this;
    zero_filled.fill.clear();
    for (uint8_t x : zero_filled.reference(data, out_bytes)) {
      if (x > 1) return false;
    }
    return true;
  }

  npyio::ReadStatus read(const std::string& path, uint8_t* out, bool is_bool,
                         uint64_t* bytes) const {
    const npyio::Wanted want{code, static_cast<int>(shape.size()), shape.data(), kMaxHeaderText,
                             UINT64_MAX};
    return npyio::read_window_parsed(path.c_str(), want, start.data(), window.data(), itemsize,
                                     fill.empty() ? nullptr : fill.data(), out, is_bool, bytes);
  }

  // Where read_window_parsed finds the payload of `file` (its own header parsed, of this
  // case's dtype and shape, native order, C order, and a file of exactly it plus the payload);
  // false where it must doubt the header.
  bool payload_at(const Bytes& file, size_t* offset) const {
    npyio::NpyHeader h;
    if (npyio::parse_header(file.data(), file.size(), kMaxHeaderText, &h) !=
            npyio::HeaderStatus::OK ||
        std::strcmp(h.code, code) != 0 || h.fortran_order || (h.itemsize > 1 && !h.little_endian) ||
        h.rank != static_cast<int>(shape.size()) ||
        file.size() != h.data_offset + h.payload_bytes) {
      return false;
    }
    for (int i = 0; i < h.rank; ++i) {
      if (h.shape[i] != shape[i]) return false;
    }
    *offset = h.data_offset;
    return true;
  }
};

// The most bytes a valid fuzzed window may ask for (larger valid ones are not read).
constexpr int64_t kMaxWindowBytes = int64_t{1} << 22;

struct Fuzzer {
  std::mt19937_64 rng;
  std::string dir;
  std::map<std::string, long> counts;
  long inputs = 0;
  long sampled = 0;
  std::ofstream verdicts;

  bool regular = false;  // whether the input path now holds a regular file

  // Removes what the input path holds unless a regular file is wanted and is there (writing
  // over it reuses its inode: fewer system calls per input).
  void clear(const std::string& path, bool always) {
    if (regular && !always) return;
    unlink(path.c_str());
    rmdir(path.c_str());
    regular = false;
  }

  size_t pick(size_t n) { return n == 0 ? 0 : static_cast<size_t>(rng() % n); }

  bool fail(const char* what, Damage d, npyio::ReadStatus s) {
    std::fprintf(stderr, "VIOLATION after %ld inputs: %s (damage %s, status %s)\n", inputs,
                 what, kDamageNames[d], npyio::status_name(s));
    return false;
  }

  void damage(Bytes& file, Damage d, size_t header_len, bool is_bool) {
    switch (d) {
      case FLIP_HEADER: file[pick(header_len)] ^= static_cast<uint8_t>(1 + pick(255)); break;
      case FLIP_PAYLOAD:
        if (file.size() > header_len) {
          file[header_len + pick(file.size() - header_len)] ^= static_cast<uint8_t>(1 + pick(255));
        }
        break;
      case INSERT: file.insert(file.begin() + pick(file.size() + 1), static_cast<uint8_t>(rng())); break;
      case REMOVE: file.erase(file.begin() + pick(file.size())); break;
      case TRUNCATE: file.resize(pick(file.size())); break;
      case GROW: file.resize(file.size() + 1 + pick(64), static_cast<uint8_t>(rng())); break;
      case BOOL_BYTE:
        if (is_bool && file.size() > header_len) {
          file[header_len + pick(file.size() - header_len)] = static_cast<uint8_t>(2 + pick(254));
        }
        break;
      default: break;
    }
  }

  // One input: a file of random kind and shape, damaged one way; false on a violation.
  bool one(const std::string& path) {
    const Kind& kind = kKinds[pick(sizeof(kKinds) / sizeof(kKinds[0]))];
    std::vector<size_t> shape(pick(4));
    for (auto& s : shape) s = pick(rng() % 16 == 0 ? 200 : 9);
    size_t count = 1;
    for (size_t s : shape) count *= s;
    const size_t payload = count * kind.size;
    const Bytes header = make_header(kind, shape);
    Bytes file = header;
    for (size_t i = 0; i < payload; ++i) {
      file.push_back(kind.is_bool ? static_cast<uint8_t>(rng() & 1) : static_cast<uint8_t>(rng()));
    }
    const Damage d = static_cast<Damage>(pick(DAMAGES));
    damage(file, d, header.size(), kind.is_bool);
    ++inputs;
    Bytes out(payload + 1);
    if (d >= RACE_TRUNCATE) return race(path, d, file, header, payload, kind, shape, out);
    clear(path, d >= DIRECTORY);
    if (d == DIRECTORY) mkdir(path.c_str(), 0755);
    if (d == FIFO) mkfifo(path.c_str(), 0644);
    if (d < DIRECTORY && !write_file(path, file)) {
      return fail("cannot write the input", d, npyio::ReadStatus::OK);
    }
    regular = d < DIRECTORY;
    auto s = npyio::read_npy(path.c_str(), header.data(), header.size(), out.data(), payload,
                             kind.is_bool);
    ++counts[npyio::status_name(s)];
    const bool want = d < DIRECTORY && expect_ok(file, header, payload, kind.is_bool);
    if ((s == npyio::ReadStatus::OK) != want) return fail("verdict differs from the oracle", d, s);
    if (want && std::memcmp(out.data(), file.data() + header.size(), payload) != 0) {
      return fail("OK, but the output is not the payload", d, s);
    }
    if (d < DIRECTORY && verdicts.is_open() && pick(1000) == 0) sample(file, header, kind, shape, s);
    if (d < DIRECTORY && !check_memory(d, file, header, payload, kind.is_bool)) return false;
    return check_range(path, d, file, header.size() + payload) &&
           check_rows(path, d, file, header.size(), header.size() + payload) &&
           check_window(path, d, file, header, kind, shape) &&
           check_parsed(path, d, file, expect_ok(file, header, payload, kind.is_bool), kind,
                        shape);
  }

  // read_npy_parsed's room: what it was asked for, and whether it fails.
  struct ParsedRoom {
    Bytes data;
    bool fail = false;
    long asked = 0;
    uint64_t offset = 0, payload = 0;
    std::vector<int64_t> shape;  // the parsed header's
    static uint8_t* allocate(const npyio::NpyHeader& h, void* context) {
      auto* room = static_cast<ParsedRoom*>(context);
      ++room->asked;
      room->offset = h.data_offset;
      room->payload = h.payload_bytes;
      room->shape.assign(h.shape, h.shape + h.rank);
      if (room->fail) return nullptr;
      room->data.assign(h.payload_bytes, 0xAB);  // exact: ASan sees an overrun
      return room->data.data();
    }
  };

  // read_npy_parsed (the op's read of a file of any shape, its header parsed by the core) on
  // the input, asked for its kind and its shape, an unknown rank, some dims unknown, or a
  // wrong dim. The allocator is asked only for a file of exactly the parsed header plus its
  // payload (a header that lies allocates nothing); an undamaged file of the wanted kind and
  // shape is OK; OK means a file of exactly that size whose payload is the output.
  bool check_parsed(const std::string& path, Damage d, const Bytes& file, bool intact,
                    const Kind& kind, const std::vector<size_t>& shape) {
    std::vector<int64_t> dims(shape.begin(), shape.end());
    const size_t how = pick(4);
    int rank = static_cast<int>(dims.size());
    bool fits = true;
    if (how == 1) rank = -1;
    if (how == 2) {
      for (auto& dim : dims) dim = pick(2) ? -1 : dim;
    }
    if (how == 3 && !dims.empty()) {
      dims[pick(dims.size())] += 1;
      fits = false;
    }
    ParsedRoom room;
    room.fail = pick(8) == 0;
    npyio::Wanted want{kind.descr + 1, rank, dims.data(), 10000, UINT64_MAX};
    npyio::NpyHeader h;
    const auto s = npyio::read_npy_parsed(path.c_str(), want, kind.is_bool,
                                          &ParsedRoom::allocate, &room, &h);
    ++counts[std::string("parsed ") + npyio::status_name(s)];
    if (room.asked > 1) return fail("parsed: allocator asked twice", d, s);
    if (room.asked == 1 && file.size() != room.offset + room.payload) {
      return fail("parsed: allocated for a header that lies about the size", d, s);
    }
    if (d >= DIRECTORY && s == npyio::ReadStatus::OK) return fail("parsed: OK, no file", d, s);
    const bool no_memory = room.asked == 1 && room.fail && room.payload > 0;
    if (no_memory != (s == npyio::ReadStatus::NO_MEMORY)) {
      return fail("parsed: NO_MEMORY differs", d, s);
    }
    if (d < DIRECTORY && intact && fits && !room.fail && s != npyio::ReadStatus::OK) {
      return fail("parsed: an intact file doubted", d, s);
    }
    if (!check_placed(path, d, want, kind, room)) return false;
    if (s != npyio::ReadStatus::OK) return true;
    if (file.size() != h.data_offset + h.payload_bytes ||
        (h.payload_bytes > 0 && std::memcmp(room.data.data(), file.data() + h.data_offset,
                                            h.payload_bytes) != 0)) {
      return fail("parsed: OK, but the output is not the file's payload", d, s);
    }
    if (!fits || (rank >= 0 && h.rank != rank)) return fail("parsed: OK for another shape", d, s);
    for (int i = 0; rank >= 0 && i < h.rank; ++i) {
      if (dims[i] >= 0 && dims[i] != h.shape[i]) return fail("parsed: OK, other dims", d, s);
    }
    return true;
  }

  // check_npy (the verdict on an object already read whole, remote.cc) on the same bytes:
  // the same verdict as the oracle's for a regular file holding them.
  bool check_memory(Damage d, const Bytes& file, const Bytes& header, size_t payload,
                    bool is_bool) {
    auto s = npyio::check_npy(file.data(), file.size(), header.data(), header.size(), payload,
                              is_bool);
    ++counts[std::string("memory ") + npyio::status_name(s)];
    if ((s == npyio::ReadStatus::OK) != expect_ok(file, header, payload, is_bool)) {
      return fail("memory verdict differs from the oracle", d, s);
    }
    return true;
  }

  // read_range on the same input: a random range of the size a plan recorded (the valid
  // file's, or sometimes another), OK exactly when the input is a regular file of that size
  // and the range lies within it, and then the output is the file's bytes there.
  bool check_range(const std::string& path, Damage d, const Bytes& file, size_t planned) {
    const size_t size = pick(4) == 0 ? pick(planned + 2) : planned;
    const size_t offset = pick(size + 2);
    const size_t length = pick(size + 2 - (offset > size ? size : offset));
    Bytes out(length + 1);
    auto s = npyio::read_range(path.c_str(), size, offset, out.data(), length);
    ++counts[std::string("range ") + npyio::status_name(s)];
    const bool want = d < DIRECTORY && file.size() == size && offset + length <= size;
    if ((s == npyio::ReadStatus::OK) != want) return fail("range verdict differs", d, s);
    if (want && length > 0 && std::memcmp(out.data(), file.data() + offset, length) != 0) {
      return fail("range OK, but the output is not the file's bytes", d, s);
    }
    return check_range_into(path, d, size, offset, length, want ? file.data() + offset : nullptr);
  }

  // read_rows on the same input: the file as two entries of a numbering (its own size and
  // header length, or sometimes others), random row bytes, random runs (some outside the
  // files, some past their rows), maybe swapped and bool-checked. Each run is OK exactly when
  // its entry's arithmetic holds (rows whole, the run within them), the input is a regular
  // file of the entry's size and, for bools, the run's bytes are 0 or 1; then its output is
  // the file's bytes there (each unit reversed when swapped), else zeros.
  bool check_rows(const std::string& path, Damage d, const Bytes& file, size_t header,
                  size_t planned) {
    // mostly a row size that divides the payload (a real plan's), else any
    const size_t payload = planned - header;
    std::vector<size_t> divisors;
    for (size_t b = 1; b <= 64; ++b) {
      if (payload % b == 0) divisors.push_back(b);
    }
    const size_t row_bytes = pick(4) == 0 ? 1 + pick(64) : divisors[pick(divisors.size())];
    const size_t unit = size_t{1} << pick(4);
    const bool check_bool = pick(4) == 0;
    npyio::RowFile files[2];
    for (auto& f : files) {
      f = {path.c_str(), pick(4) == 0 ? pick(planned + 2) : planned,
           pick(4) == 0 ? pick(planned + 2) : header, pick(2) == 0};
    }
    std::vector<npyio::RowRun> runs(1 + pick(6));
    size_t total = 0;
    const uint64_t rows = payload / row_bytes;
    for (auto& r : runs) {  // mostly within the rows, sometimes past them or in no file
      const uint64_t first = pick(rows + 2);
      r = {pick(8) == 0 ? 2 + pick(3) : pick(2), first, pick(rows + 2 - (first > rows ? rows : first))};
      total += r.rows;
    }
    Bytes out(total * row_bytes + 1, 0xAB);  // one past the end: never written
    std::vector<npyio::ReadStatus> statuses(runs.size());
    npyio::read_rows(files, 2, runs.data(), runs.size(), row_bytes, unit, check_bool,
                     out.data(), statuses.data());
    if (out.back() != 0xAB) return fail("rows: wrote past the runs", d, statuses[0]);
    size_t at = 0;
    for (size_t i = 0; i < runs.size(); ++i) {
      const auto& r = runs[i];
      const auto s = statuses[i];
      ++counts[std::string("rows ") + npyio::status_name(s)];
      const size_t length = r.rows * row_bytes;
      bool want = r.file < 2 && d < DIRECTORY;
      const npyio::RowFile& f = files[want ? r.file : 0];
      want = want && f.data_offset <= f.size && (f.size - f.data_offset) % row_bytes == 0 &&
             r.first + r.rows <= (f.size - f.data_offset) / row_bytes && file.size() == f.size;
      const uint8_t* from = want ? file.data() + f.data_offset + r.first * row_bytes : nullptr;
      for (size_t k = 0; want && check_bool && k < length; ++k) want = from[k] <= 1;
      if ((s == npyio::ReadStatus::OK) != want) return fail("rows: verdict differs", d, s);
      for (size_t k = 0; k < length; ++k) {
        // the byte the output holds at k: the file's, its unit reversed where swapped
        const size_t in = f.swap && unit > 1 ? (k / unit) * unit + (unit - 1 - k % unit) : k;
        const bool whole = (k / unit + 1) * unit <= length;
        const uint8_t expected = !want ? 0 : from[whole ? in : k];
        if (out[at + k] != expected) return fail("rows: not the file's bytes, or not zeros", d, s);
      }
      at += length;
    }
    return true;
  }

  // The op's range read: its output allocated by the callback once the file is checked.
  struct Room {
    Bytes data;
    bool fail = false;
    long asked = 0;
    size_t length = 0;
    static uint8_t* allocate(size_t length, void* context) {
      auto* room = static_cast<Room*>(context);
      ++room->asked;
      room->length = length;
      if (room->fail) return nullptr;
      room->data.assign(length, 0xAB);  // exact: ASan sees an overrun
      return room->data.data();
    }
  };

  // read_range_into on the input: the allocator asked once, for `length`, exactly when the
  // file passes read_range's check (then `expected` holds the range's bytes; else it is null),
  // and one that fails gives NO_MEMORY.
  bool check_range_into(const std::string& path, Damage d, size_t size, size_t offset,
                        size_t length, const uint8_t* expected) {
    Room room;
    room.fail = pick(4) == 0;
    const auto s = npyio::read_range_into(path.c_str(), size, offset, length,
                                          &Room::allocate, &room);
    ++counts[std::string("range_into ") + npyio::status_name(s)];
    // the file passes the check (and reads whole, it is not racing) exactly when read_range
    // said OK: the allocator is asked then, and only then
    const bool checked = expected != nullptr;
    if (room.asked != (checked ? 1 : 0)) return fail("range_into: allocator asked wrongly", d, s);
    if (checked && room.length != length) return fail("range_into: asked another length", d, s);
    const bool no_memory = checked && room.fail && length > 0;
    if ((s == npyio::ReadStatus::NO_MEMORY) != no_memory) {
      return fail("range_into: NO_MEMORY differs", d, s);
    }
    if ((s == npyio::ReadStatus::OK) != (checked && !no_memory)) {
      return fail("range_into: verdict differs from read_range's", d, s);
    }
    if (s == npyio::ReadStatus::OK && length > 0 &&
        std::memcmp(room.data.data(), expected, length) != 0) {
      return fail("range_into OK, but the output is not the file's bytes", d, s);
    }
    return true;
  }

  // A placement of a window on `rank` axes: some axes cropped, in any order, placed at
  // random (draws mostly in [0, 1), sometimes not finite, negative or of another count; with
  // foreground centres or without), at the centre or at fixed starts, under any policy.
  struct PlacedCase {
    std::vector<int> axes;
    std::vector<int64_t> sizes, fixed, window;
    std::vector<double> draw;
    npyio::Placement place{};
  };
  PlacedCase make_placement(int rank) {
    PlacedCase c;
    for (int a = 0; a < rank; ++a) {
      c.window.push_back(static_cast<int64_t>(pick(6)));
      if (pick(3) != 0) c.axes.push_back(a);
    }
    std::shuffle(c.axes.begin(), c.axes.end(), rng);
    const size_t k = c.axes.size();
    for (int axis : c.axes) {
      c.sizes.push_back(c.window[static_cast<size_t>(axis)]);
      c.fixed.push_back(pick(16) == 0 ? extreme() : static_cast<int64_t>(pick(9)) - 3);
    }
    const size_t count = pick(16) == 0 ? pick(2 * k + 2) : (pick(2) + 1) * k;
    for (size_t i = 0; i < count; ++i) {
      const size_t odd = pick(24);
      c.draw.push_back(odd == 0   ? std::nan("")
                       : odd == 1 ? -0.5
                       : odd == 2 ? 1e300
                       : i >= k   ? static_cast<double>(pick(12)) - 1.0  // a voxel, or -1
                                  : std::uniform_real_distribution<double>(0.0, 1.0)(rng));
    }
    c.place.start = static_cast<npyio::WindowStart>(pick(3));
    c.place.policy = static_cast<npyio::WindowPolicy>(pick(3));
    c.place.count = static_cast<int>(k);
    c.place.axes = c.axes.data();
    c.place.sizes = c.sizes.data();
    c.place.fixed = c.fixed.data();
    c.place.draw = c.draw.data();
    c.place.draw_count = static_cast<int>(count);
    return c;
  }

  // read_window_placed (the op's window read, placed by the file's own shape), with
  // read_npy_parsed's `want`: it gets past the header exactly where read_npy_parsed does
  // (whose allocator then saw the header: `room`), with that header's dims, and then reads
  // exactly what read_window_parsed reads at the start place_window gives on those dims
  // (BAD_WINDOW where it gives none, OUTSIDE where it does not fit under "error").
  bool check_placed(const std::string& path, Damage d, const npyio::Wanted& want,
                    const Kind& kind, const ParsedRoom& room) {
    const int rank = want.rank < 0 ? 0 : want.rank;
    PlacedCase c = make_placement(rank);
    bool fits = true;
    const int64_t out_bytes = WindowCase::product(c.window, kind.size, &fits);
    Bytes out(static_cast<size_t>(out_bytes));  // exact: ASan sees any overrun
    std::vector<int64_t> dims(static_cast<size_t>(rank) + 1, INT64_MIN);
    uint64_t bytes = 0;
    const auto s =
        npyio::read_window_placed(path.c_str(), want, c.place, c.window.data(), kind.size,
                                  nullptr, out.data(), kind.is_bool, dims.data(), &bytes);
    ++counts[std::string("placed ") + npyio::status_name(s)];
    if (want.rank < 0) {
      return s == npyio::ReadStatus::BAD_WINDOW ? true : fail("placed: rank < 0 read", d, s);
    }
    if (npyio::bounce_bytes_held() != 0) return fail("a bounce buffer outlived its call", d, s);
    if (room.asked == 0) {  // read_npy_parsed doubted the header: so must it
      const bool past = s == npyio::ReadStatus::OK || s == npyio::ReadStatus::OUTSIDE ||
                        s == npyio::ReadStatus::BAD_WINDOW || dims[0] != INT64_MIN;
      return past ? fail("placed: past a header read_npy_parsed doubts", d, s) : true;
    }
    if (!std::equal(room.shape.begin(), room.shape.end(), dims.begin(), dims.begin() + rank) ||
        room.shape.size() != static_cast<size_t>(rank)) {
      return fail("placed: dims are not the header's", d, s);
    }
    int64_t start[npyio::kMaxRank];
    bool inside = false;
    if (!npyio::place_window(c.place, dims.data(), rank, start, &inside)) {
      return s == npyio::ReadStatus::BAD_WINDOW ? true : fail("placed: placement", d, s);
    }
    if (c.place.policy == npyio::WindowPolicy::ERROR && !inside) {
      return s == npyio::ReadStatus::OUTSIDE ? true : fail("placed: outside not refused", d, s);
    }
    npyio::Wanted exact = want;
    exact.dims = dims.data();
    Bytes again(out.size());
    const auto t = npyio::read_window_parsed(path.c_str(), exact, start, c.window.data(),
                                             kind.size, nullptr, again.data(), kind.is_bool,
                                             nullptr);
    if (s != t) return fail("placed: not read_window_parsed's verdict", d, s);
    if (s == npyio::ReadStatus::OK && again != out) {
      return fail("placed: not read_window_parsed's window", d, s);
    }
    return true;
  }

  // A value near an edge of int64, or a large one: the window arithmetic's hard cases.
  int64_t extreme() {
    switch (pick(5)) {
      case 0: return INT64_MAX - static_cast<int64_t>(pick(4));
      case 1: return INT64_MIN + static_cast<int64_t>(pick(4));
      case 2: return int64_t{1} << (31 + pick(32));
      case 3: return -static_cast<int64_t>(pick(1 << 20));
      default: return -1 - static_cast<int64_t>(pick(3));
    }
  }

  // A random window of the recorded shape (or, sometimes, another): mostly within a few
  // elements of the array's edges, sometimes past them, empty, or extreme.
  WindowCase make_window(const std::vector<size_t>& shape, const Kind& kind) {
    WindowCase w;
    const size_t itemsize = kind.size;
    w.itemsize = itemsize;
    w.code = kind.descr + 1;
    for (size_t s : shape) {
      int64_t dim = static_cast<int64_t>(s);
      if (pick(16) == 0) dim = pick(8) == 0 ? extreme() : static_cast<int64_t>(pick(12));
      const int64_t small = std::min<int64_t>(std::max<int64_t>(dim, 0), 12);
      int64_t win = static_cast<int64_t>(pick(static_cast<size_t>(small) + 4));
      int64_t st = static_cast<int64_t>(pick(static_cast<size_t>(small) + 6)) - 3;
      if (pick(24) == 0) win = extreme();
      if (pick(24) == 0) st = extreme();
      w.shape.push_back(dim);
      w.start.push_back(st);
      w.window.push_back(win);
    }
    if (pick(2) == 0) {
      for (size_t b = 0; b < itemsize; ++b) w.fill.push_back(static_cast<uint8_t>(rng()));
    }
    return w;
  }

  // read_window_parsed (the op's window read, the file's own header parsed) on the same
  // input, against the whole file cut in the driver.
  bool check_window(const std::string& path, Damage d, const Bytes& file, const Bytes& header,
                    const Kind& kind, const std::vector<size_t>& shape) {
    const WindowCase w = make_window(shape, kind);
    int64_t payload = 0, out_bytes = 0;
    const bool valid = w.valid(0, &payload, &out_bytes);
    if (valid && out_bytes > kMaxWindowBytes) {
      ++counts["window skipped (too large to hold)"];
      return true;
    }
    Bytes out(valid ? static_cast<size_t>(out_bytes) : 0);  // exact: ASan sees any overrun
    uint64_t bytes = 0;
    const auto s = w.read(path, out.data(), kind.is_bool, &bytes);
    ++counts[std::string("window ") + npyio::status_name(s)];
    if (npyio::bounce_bytes_held() != 0) return fail("a bounce buffer outlived its call", d, s);
    if ((s == npyio::ReadStatus::BAD_WINDOW) != !valid) return fail("window arithmetic", d, s);
    if (!valid) return true;
    // an intact file of the case's shape must be read; a damaged header that still says it
    // (parse_header, held to the grammar by tests/fuzz/headers.py) may be
    const bool intact = d < DIRECTORY &&
                        std::equal(w.shape.begin(), w.shape.end(), shape.begin(), shape.end(),
                                   [](int64_t a, size_t b) { return a == int64_t(b); }) &&
                        static_cast<__int128>(file.size()) == header.size() + payload &&
                        std::memcmp(file.data(), header.data(), header.size()) == 0;
    size_t offset = header.size();
    const bool good = d < DIRECTORY && w.payload_at(file, &offset);
    if (intact && !good) return fail("an intact file's header not parsed", d, s);
    const bool want = good && (!kind.is_bool || w.bools_ok(file.data() + offset, out.size()));
    if ((s == npyio::ReadStatus::OK) != want) return fail("window verdict differs", d, s);
    if (!want) return true;
    if (w.reference(file.data() + offset, out.size()) != out) {
      return fail("window OK, but the output is not the file's slice", d, s);
    }
    // every byte of the window's intersection read, and never more than the file and its
    // head read first: the intersection's bytes counted by cutting the window from a payload
    // of ones, zero-filled
    size_t inside = 0;
    WindowCase zero_filled = w;
    zero_filled.fill.clear();
    const Bytes ones(static_cast<size_t>(payload), 1);
    for (uint8_t m : zero_filled.reference(ones.data(), out.size())) inside += m;
    const size_t head = std::min<size_t>(file.size(), 4096);
    if (bytes < offset + inside || bytes > file.size() + head) {
      return fail("window read outside [intersection + header, file size] bytes", d, s);
    }
    return true;
  }

  bool race(const std::string& path, Damage d, const Bytes& file, const Bytes& header,
            size_t payload, const Kind& kind, const std::vector<size_t>& shape, Bytes& out) {
    const bool is_bool = kind.is_bool;
    // Every other race reads a window of the file (a valid one, within a few elements of the
    // edges) instead of the whole file: read_window must doubt a change as read_npy does.
    WindowCase w;
    int64_t ignored = 0, out_bytes = -1;
    // a third of the others read a range of it by read_range_into (the op's range read)
    const bool ranged = pick(3) == 0;
    if (!ranged && pick(2) == 0) {
      w = make_window(shape, kind);
      if (!w.valid(header.size(), &ignored, &out_bytes) || ignored != int64_t(payload) ||
          out_bytes > kMaxWindowBytes) {
        out_bytes = -1;  // only a valid window of the recorded shape races
      }
    }
    // The file starts valid (A); the racer truncates it and puts A back, rewrites it in
    // place with B, or renames a file holding B over it.
    Bytes a = header, b = header;
    for (size_t i = 0; i < payload; ++i) {
      a.push_back(is_bool ? static_cast<uint8_t>(rng() & 1) : static_cast<uint8_t>(rng()));
      b.push_back(is_bool ? static_cast<uint8_t>(rng() & 1) : static_cast<uint8_t>(rng()));
    }
    (void)file;
    clear(path, true);
    if (!write_file(path, a)) return fail("cannot write the input", d, npyio::ReadStatus::OK);
    const std::string other = path + ".other";
    if (d == RACE_RENAME) write_file(other, b);
      regular = false;
    std::thread racer([&] {
      if (d == RACE_TRUNCATE) {
        if (truncate(path.c_str(), static_cast<off_t>(pick(a.size()))) == 0) write_file(path, a);
      } else if (d == RACE_REWRITE) {
        int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
        if (fd >= 0) {
          ssize_t ignored = pwrite(fd, b.data(), b.size(), 0);
          (void)ignored;
          close(fd);
        }
      } else {
        rename(other.c_str(), path.c_str());
      }
    });
    Bytes cut(out_bytes < 0 ? 0 : static_cast<size_t>(out_bytes));
    uint64_t bytes = 0;
    const size_t offset = pick(a.size() + 1), length = pick(a.size() - offset + 1);
    Room room;
    auto s = ranged ? npyio::read_range_into(path.c_str(), a.size(), offset, length,
                                             &Room::allocate, &room)
             : out_bytes >= 0 ? w.read(path, cut.data(), is_bool, &bytes)
                              : npyio::read_npy(path.c_str(), header.data(), header.size(),
                                                out.data(), payload, is_bool);
    racer.join();
    ++counts[std::string(ranged ? "race range_into " : out_bytes >= 0 ? "race window " : "") +
             npyio::status_name(s)];
    if (s != npyio::ReadStatus::OK) return true;
    if (ranged) {
      // OK: every byte is the one A or (but for a truncation, which puts A back) B holds there
      if (room.asked != 1 || room.data.size() != length) {
        return fail("range_into OK, but its allocator was not asked once for the range", d, s);
      }
      for (size_t i = 0; i < length; ++i) {
        const uint8_t x = room.data[i];
        if (x != a[offset + i] && !(d != RACE_TRUNCATE && x == b[offset + i])) {
          return fail("range_into OK, but the output holds bytes the file never held", d, s);
        }
      }
      return true;
    }
    if (out_bytes >= 0) {
      // OK: every byte is the one A's or B's window holds there
      const Bytes ra = w.reference(a.data() + header.size(), cut.size());
      const Bytes rb = w.reference(b.data() + header.size(), cut.size());
      for (size_t i = 0; i < cut.size(); ++i) {
        if (cut[i] != ra[i] && !(d != RACE_TRUNCATE && cut[i] == rb[i])) {
          return fail("window OK, but the output holds bytes the file never held", d, s);
        }
      }
      return true;
    }
    // OK: every byte is the one A or B holds there (a same-size rewrite within one tick of the
    // file system's clock can tear, as any reader's would; the header always matched).
    for (size_t i = 0; i < payload; ++i) {
      const uint8_t x = out[i], pa = a[header.size() + i], pb = b[header.size() + i];
      if (x != pa && !(d == RACE_REWRITE && x == pb) && !(d == RACE_RENAME && x == pb)) {
        return fail("OK, but the output holds bytes the file never held", d, s);
      }
    }
    return true;
  }

  // Threads racing for one ByteBudget (budget.h): random requests, some empty, some above the
  // limit. What the holds hold (counted by the driver) is never above the limit, but for one
  // request larger than it, held with nothing else; the budget holds nothing at the end.
  bool race_budget() {
    const size_t limit = 1 + pick(1000);
    npyio::ByteBudget budget(limit);
    std::mutex mu;  // the driver's own count of what the holds hold: small bytes, large ones
    size_t small = 0, large = 0;
    bool broken = false;
    std::vector<std::thread> threads;
    const int n = 2 + static_cast<int>(pick(4));
    for (int t = 0; t < n; ++t) {
      const uint64_t seed = rng();
      threads.emplace_back([&, seed] {
        std::mt19937_64 local(seed);
        for (int i = 0; i < 40; ++i) {
          const size_t bytes = local() % 8 == 0 ? limit + local() % 100 : local() % (limit + 1);
          npyio::BudgetHold hold(budget, bytes);
          {
            std::lock_guard<std::mutex> lock(mu);
            (bytes > limit ? large : small) += bytes > limit ? 1 : bytes;
            // within the limit, or one large request with nothing else (but empty requests)
            broken = broken || !((large == 0 && small <= limit) || (large == 1 && small == 0));
          }
          if (local() % 4 == 0) std::this_thread::yield();
          std::lock_guard<std::mutex> lock(mu);
          (bytes > limit ? large : small) -= bytes > limit ? 1 : bytes;
        }
      });
    }
    for (auto& t : threads) t.join();
    ++counts["budget races"];
    if (broken || budget.held() != 0) {
      return fail("budget: more bytes held than its limit", NONE, npyio::ReadStatus::OK);
    }
    return true;
  }

  // A ReadPool (read_pool.h) racing and cancelled: batches of good and damaged files, some
  // whose open stalls until released, submitted in ranges and read in a caller's thread, the
  // pool closed at a random point (often with reads stalled). Each batch whose `done` ran has
  // every file's verdict and bytes as read_npy gives them (good: the payload; else zeros);
  // `done` runs at most once, never once Close has returned; ReadHere after Close is false; and
  // every thread, stalled ones included, exits once its reads are released.
  bool race_pool() {
    const Kind& kind = kKinds[pick(std::size(kKinds))];
    const std::vector<size_t> shape = {1 + pick(64)};
    const Bytes header = make_header(kind, shape);
    const size_t payload = shape[0] * kind.size;
    auto plan = std::make_shared<std::vector<npyio::PartPlan>>();
    plan->push_back({std::string(header.begin(), header.end()), payload, kind.is_bool});
    const size_t count = 1 + pick(12);
    std::vector<std::string> paths;
    std::vector<Bytes> files;
    std::vector<bool> good;
    for (size_t i = 0; i < count; ++i) {
      Bytes file = header;
      for (size_t b = 0; b < payload; ++b) file.push_back(static_cast<uint8_t>(rng() % 2));
      if (pick(3) == 0) file.resize(pick(file.size() + 8), 7);  // damaged: its size
      const bool stalls = pick(4) == 0;
      paths.push_back(dir + "/pool-" + std::to_string(i) + (stalls ? "-stall" : "") + ".npy");
      good.push_back(expect_ok(file, header, payload, kind.is_bool));
      if (!write_file(paths.back(), file)) return fail("pool: cannot write", NONE, npyio::ReadStatus::OK);
      files.push_back(std::move(file));
    }
    stalls_released = false;
    const int64_t live = npyio::ReadPool::LiveThreads();
    auto pool = std::make_unique<npyio::ReadPool>(1 + static_cast<int>(pick(4)));
    struct Out {
      std::vector<uint8_t> bytes;
      std::unique_ptr<bool[]> ok;
      std::atomic<int> done{0};
    };
    // shared: a caller stalled past Close is detached, as the op's producer is
    struct Flags {
      std::atomic<bool> closed{false}, broken{false};
    };
    auto flags = std::make_shared<Flags>();
    std::atomic<bool>& closed = flags->closed;
    std::atomic<bool>& broken = flags->broken;
    std::vector<std::shared_ptr<Out>> outs;
    std::vector<std::pair<std::shared_ptr<npyio::BatchRead>, std::shared_ptr<Out>>> here;
    const size_t batches = 1 + pick(6);
    const size_t close_at = pick(batches + 1);
    for (size_t b = 0; b < batches; ++b) {
      if (b == close_at) {
        pool->Close();
        closed = true;
      }
      const size_t units = 1 + pick(count);
      auto out = std::make_shared<Out>();
      out->bytes.assign(units * payload + 1, 0xAB);  // one canary byte past the last slice
      out->ok.reset(new bool[units]());
      auto read = std::make_shared<npyio::BatchRead>(plan, units, out, stalling_read);
      for (size_t u = 0; u < units; ++u) {
        npyio::FileRead& f = read->file(u, 0);
        f.path = paths[(b + u) % count];
        f.out = payload == 0 ? nullptr : out->bytes.data() + u * payload;
        f.ok = out->ok.get() + u;
      }
      outs.push_back(out);
      if (pick(3) == 0) {  // read in the caller's thread, as the producer reads a small batch
        here.emplace_back(read, out);
        continue;
      }
      // weakly: what the reads write into is kept alive by the BatchRead alone
      pool->Submit(read, 1 + pick(units + 1), [weak = std::weak_ptr<Out>(out), flags] {
        if (flags->closed.load()) flags->broken = true;  // a `done` after Close returned
        if (auto out = weak.lock()) ++out->done;
      });
      if (pick(4) == 0) std::this_thread::yield();
    }
    // The caller: its batches in order, stopping at the first ReadHere that says closed (then
    // the pool may be gone), as the op's producer does.
    npyio::ReadPool* p = pool.get();
    std::thread caller([p, here, flags] {
      for (const auto& [read, out] : here) {
        const bool before = flags->closed.load();
        if (!p->ReadHere(read)) return;
        if (before) flags->broken = true;  // ReadHere after Close must say closed
        ++out->done;
      }
    });
    if (!closed) {
      if (pick(2) == 0) std::this_thread::sleep_for(std::chrono::microseconds(pick(2000)));
      if (close_at == batches || pick(2) == 0) {
        const bool free = pool->Close();
        closed = true;  // after: a `done` running meanwhile may be either side
        if (!free) {
          caller.detach();  // in a stalled read: it returns alone, touching no pool
          ++counts["pool closed on a caller's stalled read"];
        }
      }
    }
    if (closed) {  // no `done` runs now: the batches not done are the reads' alone to keep
      for (auto& out : outs) {
        if (out->done == 0) out.reset();
      }
    }
    stalls_released = true;  // the stalled reads end (closed pools: into `out`, kept alive)
    if (caller.joinable()) caller.join();
    pool.reset();
    for (size_t b = 0; b < outs.size(); ++b) {
      if (outs[b] == nullptr) continue;
      const Out& out = *outs[b];
      if (out.done > 1) broken = true;
      if (out.done != 1) continue;
      const size_t units = (out.bytes.size() - 1) / std::max<size_t>(payload, 1);
      for (size_t u = 0; u < units && payload > 0; ++u) {
        const size_t f = (b + u) % count;
        if (out.ok[u] != good[f]) broken = true;
        const uint8_t* slice = out.bytes.data() + u * payload;
        for (size_t i = 0; i < payload; ++i) {
          if (slice[i] != (good[f] ? files[f][header.size() + i] : 0)) broken = true;
        }
      }
      if (out.bytes.back() != 0xAB) broken = true;
    }
    ++counts["pool races"];
    if (broken) return fail("pool: a verdict, a byte or a `done` wrong", NONE, npyio::ReadStatus::OK);
    // every thread ends once its reads are released
    for (int i = 0; i < 5000 && npyio::ReadPool::LiveThreads() > live; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (npyio::ReadPool::LiveThreads() > live) {
      return fail("pool: a thread outlived its released reads", NONE, npyio::ReadStatus::OK);
    }
    return true;
  }

  // The header cache (npy_read.h's kHeaderCacheEntries): files written once, read by
  // read_npy_parsed on four threads at once; once a file is old enough its header comes from
  // the cache. Now and then one is rewritten in place with another shape of the same size (only
  // its header differs): every read must give the shape and payload the file holds then, never
  // a kept header of what it held before.
  std::vector<std::string> kept_paths;
  std::vector<Bytes> kept_files;
  std::vector<std::vector<size_t>> kept_shapes;

  void write_kept(size_t f) {
    static const size_t kSides[] = {1, 2, 3, 4, 6, 8, 12, 24};  // a * b == 24
    const size_t a = kSides[pick(8)];
    kept_shapes[f] = {a, 24 / a};
    Bytes file = make_header(kKinds[4], kept_shapes[f]);  // <f4
    for (size_t i = 0; i < 24 * 4; ++i) file.push_back(static_cast<uint8_t>(rng()));
    kept_files[f] = file;
    write_file(kept_paths[f], file);
  }

  bool race_kept() {
    if (kept_paths.empty()) {
      mkdir((dir + "/kept").c_str(), 0755);
      for (size_t f = 0; f < 8; ++f) {
        kept_paths.push_back(dir + "/kept/" + std::to_string(f) + ".npy");
        kept_files.emplace_back();
        kept_shapes.emplace_back();
        write_kept(f);
      }
    }
    if (pick(16) == 0) write_kept(pick(kept_paths.size()));
    const uint64_t from_files = npyio::headers_read();
    std::atomic<bool> broken{false};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([this, &broken] {
        const int64_t dims[2] = {-1, -1};
        const npyio::Wanted want{"f4", 2, dims, 10000, UINT64_MAX};
        for (size_t f = 0; f < kept_paths.size(); ++f) {
          ParsedRoom room;
          npyio::NpyHeader h;
          const auto s = npyio::read_npy_parsed(kept_paths[f].c_str(), want, false,
                                                &ParsedRoom::allocate, &room, &h);
          const Bytes& file = kept_files[f];
          const std::vector<int64_t> shape(kept_shapes[f].begin(), kept_shapes[f].end());
          if (s != npyio::ReadStatus::OK || room.shape != shape ||
              std::memcmp(room.data.data(), file.data() + file.size() - 96, 96) != 0) {
            broken = true;
          }
        }
      });
    }
    for (auto& t : threads) t.join();
    counts["kept reads"] += static_cast<long>(4 * kept_paths.size());
    counts["kept reads from the file"] += static_cast<long>(npyio::headers_read() - from_files);
    if (broken) return fail("kept: a header or payload not the file's", NONE, npyio::ReadStatus::OK);
    return true;
  }

  // The pool's sign that a range waited on storage (BatchRead::Read): a range that sleeps past
  // the floor (a slow network file system) counts; one of a few milliseconds never does when its
  // thread had its core (a busy machine's preempted thread took a first rule to be waiting:
  // tried 3 times, for a loaded machine's own delays); and a read of evicted files counts by
  // its block inputs, where the file system reports them (then "pool waits: cold" counts).
  static inline std::atomic<int64_t> sleep_us{0};
  static npyio::ReadStatus sleeping_read(const char* path, const uint8_t* header,
                                         size_t header_len, uint8_t* out, size_t payload_len,
                                         bool check_bool) {
    std::this_thread::sleep_for(std::chrono::microseconds(sleep_us.load()));
    return npyio::read_npy(path, header, header_len, out, payload_len, check_bool);
  }

  bool pool_waits() {
    const Kind& kind = kKinds[4];  // <f4
    const std::vector<size_t> shape = {size_t{1} << 14};  // 64 KiB
    const Bytes header = make_header(kind, shape);
    auto plan = std::make_shared<std::vector<npyio::PartPlan>>();
    plan->push_back({std::string(header.begin(), header.end()), shape[0] * kind.size, false});
    Bytes file = header;
    file.resize(header.size() + shape[0] * kind.size, 1);
    const std::string paths[] = {dir + "/waits-0.npy", dir + "/waits-1.npy", dir + "/probe.npy"};
    for (const auto& path : paths) {
      if (!write_file(path, file)) return fail("waits: cannot write", NONE, npyio::ReadStatus::OK);
    }
    auto out = std::make_shared<Bytes>(2 * shape[0] * kind.size);
    auto read = [&](size_t files) {
      auto batch = std::make_shared<npyio::BatchRead>(plan, files, out, sleeping_read);
      for (size_t u = 0; u < files; ++u) {
        batch->file(u, 0).path = paths[u];
        batch->file(u, 0).out = out->data() + u * shape[0] * kind.size;
      }
      std::atomic<bool> stop{false};
      return batch->Read(0, files, stop);
    };
    bool quick = false;
    sleep_us = 1000;  // two files, about 2 ms of wall time and little CPU
    for (int i = 0; i < 3 && !quick; ++i) quick = !read(2);
    if (!quick) return fail("waits: a range of 2 ms counted as waiting", NONE, npyio::ReadStatus::OK);
    sleep_us = 30000;
    const bool slow = read(1);
    sleep_us = 0;
    if (!slow) return fail("waits: a range of 30 ms did not count", NONE, npyio::ReadStatus::OK);
    // Cold: evicted files, where reading the evicted probe shows block inputs.
    auto evict = [](const std::string& path) {
      const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) return;
      fdatasync(fd);
      posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
      close(fd);
    };
    for (const auto& path : paths) evict(path);
    rusage before{}, after{};
    getrusage(RUSAGE_THREAD, &before);
    Bytes probe(file.size());
    const int fd = open(paths[2].c_str(), O_RDONLY | O_CLOEXEC);
    const bool probed = fd >= 0 && pread(fd, probe.data(), probe.size(), 0) > 0;
    if (fd >= 0) close(fd);
    getrusage(RUSAGE_THREAD, &after);
    if (probed && after.ru_inblock > before.ru_inblock) {
      if (!read(2)) return fail("waits: evicted files did not count", NONE, npyio::ReadStatus::OK);
      ++counts["pool waits: cold"];
    }
    ++counts["pool waits"];
    return true;
  }

  // A pool closed while its caller is stalled in a read (ReadHere), once per run, so that the
  // leg is met whatever the run's length (race_pool meets it by chance): Close says the caller
  // is in a read, the caller sees it closed once its read returns, and its thread ends.
  bool close_on_stalled_caller() {
    const Kind& kind = kKinds[4];
    const Bytes header = make_header(kind, {4});
    auto plan = std::make_shared<std::vector<npyio::PartPlan>>();
    plan->push_back({std::string(header.begin(), header.end()), 4 * kind.size, false});
    Bytes file = header;
    file.resize(header.size() + 4 * kind.size, 0);
    const std::string path = dir + "/closing-stall.npy";
    if (!write_file(path, file)) return fail("closing: cannot write", NONE, npyio::ReadStatus::OK);
    auto out = std::make_shared<Bytes>(4 * kind.size);
    auto read = std::make_shared<npyio::BatchRead>(plan, 1, out, stalling_read);
    read->file(0, 0).path = path;
    read->file(0, 0).out = out->data();
    stalls_released = false;
    stalled_now = 0;
    auto pool = std::make_unique<npyio::ReadPool>(1);
    auto said = std::make_shared<std::atomic<int>>(-1);  // ReadHere's answer, once it returns
    npyio::ReadPool* p = pool.get();
    std::thread caller([p, read, said] { *said = p->ReadHere(read) ? 1 : 0; });
    for (int i = 0; i < 10000 && stalled_now.load() == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    const bool free = pool->Close();
    stalls_released = true;
    caller.join();  // (here the pool is still alive: the op's producer would be detached)
    pool.reset();
    if (stalled_now.load() == 0 || free || said->load() != 0) {
      return fail("closing: Close on a stalled caller", NONE, npyio::ReadStatus::OK);
    }
    ++counts["pool closed on a caller's stalled read"];
    return true;
  }

  // read_npy, but a path holding "-stall" waits in "open" until stalls_released.
  static inline std::atomic<bool> stalls_released{true};
  static inline std::atomic<int> stalled_now{0};  // reads that have stalled since reset
  static npyio::ReadStatus stalling_read(const char* path, const uint8_t* header, size_t header_len,
                                         uint8_t* out, size_t payload_len, bool check_bool) {
    if (std::strstr(path, "-stall") != nullptr) {
      ++stalled_now;
      while (!stalls_released.load()) std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    return npyio::read_npy(path, header, header_len, out, payload_len, check_bool);
  }

  void sample(const Bytes& file, const Bytes& header, const Kind& kind,
              const std::vector<size_t>& shape, npyio::ReadStatus s) {
    const std::string name = "case-" + std::to_string(sampled++);
    write_file(dir + "/cases/" + name + ".npy", file);
    write_file(dir + "/cases/" + name + ".header", header);
    verdicts << name << '\t' << npyio::status_name(s) << '\t' << kind.descr << '\t';
    for (size_t i = 0; i < shape.size(); ++i) verdicts << (i ? "," : "") << shape[i];
    verdicts << '\n';
  }
};

int fuzz(double seconds, const std::string& dir, uint64_t seed) {
  Fuzzer f;
  f.rng.seed(seed);
  f.dir = dir;
  mkdir(dir.c_str(), 0755);
  mkdir((dir + "/cases").c_str(), 0755);
  f.verdicts.open(dir + "/cases/verdicts.tsv");
  if (!f.pool_waits() || !f.close_on_stalled_caller()) return 1;
  const std::string path = dir + "/input.npy";
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (true) {
    for (int i = 0; i < 256; ++i) {
      if (!f.one(path)) return 1;
    }
    if (!f.race_budget()) return 1;
    if (!f.race_pool()) return 1;
    if (!f.race_kept()) return 1;
    if (std::chrono::steady_clock::now() >= end) break;
  }
  std::printf("inputs %ld\nsampled %ld\n", f.inputs, f.sampled);
  for (const auto& [name, n] : f.counts) std::printf("status %s %ld\n", name.c_str(), n);
  return 0;
}

// Runs `body` on `threads` threads at once: the seconds until the last ends.
double on_threads(int threads, const std::function<void()>& body) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(body);
  for (auto& t : pool) t.join();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int bench(int threads, std::istream& list) {
  std::vector<std::string> paths;
  for (std::string line; std::getline(list, line);) {
    if (!line.empty()) paths.push_back(line);
  }
  if (paths.empty() || threads < 1) {
    std::fprintf(stderr, "bench: no paths, or THREADS < 1\n");
    return 2;
  }
  // The expected header is the first file's (its length from its own length field: the
  // driver plans, as npyio's plan does; the core still checks every file against it).
  Bytes head(12);
  std::ifstream first(paths[0], std::ios::binary);
  first.read(reinterpret_cast<char*>(head.data()), 12);
  const size_t header_len = head[6] == 1 ? 10 + (head[8] | head[9] << 8)
                                         : 12 + (head[8] | head[9] << 8 | head[10] << 16);
  head.resize(header_len);
  first.seekg(0);
  first.read(reinterpret_cast<char*>(head.data()), static_cast<std::streamsize>(header_len));
  struct stat st;
  if (stat(paths[0].c_str(), &st) != 0) return 2;
  const size_t payload = static_cast<size_t>(st.st_size) - header_len;
  std::atomic<size_t> next{0};
  std::atomic<long> good{0};
  const double s = on_threads(threads, [&] {
    Bytes out(payload);
    for (size_t i; (i = next.fetch_add(1)) < paths.size();) {
      good += npyio::read_npy(paths[i].c_str(), head.data(), header_len, out.data(), payload,
                              false) == npyio::ReadStatus::OK;
    }
  });
  std::printf("files %zu ok %ld seconds %.6f files_per_s %.1f bytes_per_s %.1f\n", paths.size(),
              good.load(), s, paths.size() / s, paths.size() * (header_len + payload) / s);
  return 0;
}


// A column of the windows mode (one file of each line): what its first file's header says,
// which every file of the column shares but for the cropped axes' sizes.
struct WindowColumn {
  npyio::NpyHeader first;
  std::vector<int64_t> dims;    // -1 on the cropped axes (any size), the first file's elsewhere
  std::vector<int64_t> window;  // SIZES, then the first file's dims
  std::vector<int> axes;
  size_t out_bytes = 0;
};

bool window_column(const std::string& path, const std::vector<int64_t>& sizes, WindowColumn* c) {
  Bytes head(npyio::kMaxHeader);
  std::ifstream file(path, std::ios::binary);
  file.read(reinterpret_cast<char*>(head.data()), static_cast<std::streamsize>(head.size()));
  if (npyio::parse_header(head.data(), static_cast<size_t>(file.gcount()), kMaxHeaderText,
                          &c->first) != npyio::HeaderStatus::OK ||
      c->first.rank < static_cast<int>(sizes.size())) {
    std::fprintf(stderr, "windows: %s: no header the core reads, or fewer axes than SIZES\n",
                 path.c_str());
    return false;
  }
  c->out_bytes = c->first.itemsize;
  for (int i = 0; i < c->first.rank; ++i) {
    const bool cropped = i < static_cast<int>(sizes.size());
    c->dims.push_back(cropped ? -1 : c->first.shape[i]);
    c->window.push_back(cropped ? sizes[i] : c->first.shape[i]);
    if (cropped) c->axes.push_back(i);
    c->out_bytes *= static_cast<size_t>(c->window.back());
  }
  return true;
}

// The list's lines, each split at its tabs (empty lines skipped).
std::vector<std::vector<std::string>> tab_lines(std::istream& list) {
  std::vector<std::vector<std::string>> lines;
  for (std::string line; std::getline(list, line);) {
    if (line.empty()) continue;
    std::vector<std::string> paths;
    std::stringstream fields(line);
    for (std::string path; std::getline(fields, path, '\t');) paths.push_back(path);
    lines.push_back(std::move(paths));
  }
  return lines;
}

// "n,n,..." as sizes (each >= 0, at most kMaxRank), or empty where it is not that.
std::vector<int64_t> parse_sizes(const std::string& text) {
  std::vector<int64_t> sizes;
  std::stringstream items(text);
  for (std::string item; std::getline(items, item, ',');) {
    char* end = nullptr;
    sizes.push_back(std::strtoll(item.c_str(), &end, 10));
    if (item.empty() || *end != '\0' || sizes.back() < 0) return {};
  }
  return sizes.size() > npyio::kMaxRank ? std::vector<int64_t>{} : sizes;
}

int windows(int threads, const std::string& sizes_arg, std::istream& list) {
  const std::vector<std::vector<std::string>> lines = tab_lines(list);
  const std::vector<int64_t> sizes = parse_sizes(sizes_arg);
  if (lines.empty() || threads < 1 || sizes.empty()) {
    std::fprintf(stderr, "windows: no paths, THREADS < 1, or SIZES not n,n,...\n");
    return 2;
  }
  std::vector<WindowColumn> columns(lines[0].size());
  for (size_t c = 0; c < columns.size(); ++c) {
    if (!window_column(lines[0][c], sizes, &columns[c])) return 2;
  }
  std::atomic<size_t> next{0};
  std::atomic<long> good{0};
  std::atomic<uint64_t> asked{0};
  const double s = on_threads(threads, [&] {
    std::vector<Bytes> outs;
    for (const WindowColumn& c : columns) outs.emplace_back(c.out_bytes);
    std::vector<double> draw(sizes.size());
    int64_t dims[npyio::kMaxRank];
    for (size_t i; (i = next.fetch_add(1)) < lines.size();) {
      std::mt19937_64 rng(i);  // the line's draws, whatever thread reads it
      for (double& d : draw) d = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
      for (size_t c = 0; c < columns.size() && c < lines[i].size(); ++c) {
        const WindowColumn& col = columns[c];
        const npyio::Wanted want{col.first.code, col.first.rank, col.dims.data(),
                                 kMaxHeaderText, UINT64_MAX};
        const npyio::Placement place{npyio::WindowStart::RANDOM, npyio::WindowPolicy::PAD,
                                     static_cast<int>(sizes.size()), col.axes.data(),
                                     sizes.data(), nullptr, draw.data(),
                                     static_cast<int>(draw.size())};
        uint64_t bytes = 0;
        good += npyio::read_window_placed(lines[i][c].c_str(), want, place, col.window.data(),
                                          col.first.itemsize, nullptr, outs[c].data(), false,
                                          dims, &bytes) == npyio::ReadStatus::OK;
        asked += bytes;
      }
    }
  });
  std::printf("windows %zu ok %ld seconds %.6f windows_per_s %.1f bytes_asked %llu\n",
              lines.size(), good.load(), s, lines.size() / s,
              static_cast<unsigned long long>(asked.load()));
  return 0;
}
}  // namespace

// The headers mode: each head's verdict, "OK code little fortran offset payload rank dims...",
// "SHORT offset" or "DOUBT". Exit status 1 if IN is not whole.
int headers(size_t max_header_size, const char* in_path, const char* out_path) {
  std::ifstream in(in_path, std::ios::binary);
  std::ofstream out(out_path);
  Bytes head;
  uint8_t len[4];
  while (in.read(reinterpret_cast<char*>(len), 4)) {
    const size_t n = len[0] | (len[1] << 8) | (len[2] << 16) | (size_t{len[3]} << 24);
    head.resize(n);
    if (n > 0 && !in.read(reinterpret_cast<char*>(head.data()), static_cast<std::streamsize>(n))) {
      return 1;
    }
    // A copy of exactly n bytes on the heap: the sanitizer sees any read past the head's end.
    std::unique_ptr<uint8_t[]> exact(new uint8_t[n == 0 ? 1 : n]);
    if (n > 0) std::memcpy(exact.get(), head.data(), n);
    npyio::NpyHeader h;
    const npyio::HeaderStatus status = npyio::parse_header(exact.get(), n, max_header_size, &h);
    out << npyio::header_status_name(status);
    if (status == npyio::HeaderStatus::SHORT) out << ' ' << h.data_offset;
    if (status == npyio::HeaderStatus::OK) {
      out << ' ' << h.code << ' ' << h.little_endian << ' ' << h.fortran_order << ' '
          << h.data_offset << ' ' << h.payload_bytes << ' ' << h.rank;
      for (int i = 0; i < h.rank; ++i) out << ' ' << h.shape[i];
    }
    out << '\n';
  }
  return in.eof() && in.gcount() == 0 ? 0 : 1;
}

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "fuzz" && argc >= 4) {
    return fuzz(std::atof(argv[2]), argv[3], argc > 4 ? std::strtoull(argv[4], nullptr, 10) : 1);
  }
  if (mode == "bench" && argc >= 3) {
    if (argc > 3) {
      std::ifstream list(argv[3]);
      return bench(std::atoi(argv[2]), list);
    }
    return bench(std::atoi(argv[2]), std::cin);
  }
  if (mode == "windows" && argc >= 4) {
    if (argc > 4) {
      std::ifstream list(argv[4]);
      return windows(std::atoi(argv[2]), argv[3], list);
    }
    return windows(std::atoi(argv[2]), argv[3], std::cin);
  }
  if (mode == "headers" && argc == 5) {
    return headers(std::strtoull(argv[2], nullptr, 10), argv[3], argv[4]);
  }
  std::fprintf(stderr,
               "usage: driver fuzz SECONDS DIR [SEED] | driver bench THREADS [LIST] | "
               "driver windows THREADS SIZES [LIST] | driver headers MAX IN OUT\n");
  return 2;
}
