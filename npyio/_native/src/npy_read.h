// npyio's native reader, its TensorFlow-free core: one .npy file read into a caller's buffer.
//
// The caller's plan fixes what every file holds: the expected header bytes (the first file's,
// checked in Python) and the payload's length (the static shape times the dtype's size). The
// core sizes nothing from the file: it reads exactly header_len + payload_len bytes and doubts
// any file that is not exactly that. A doubted file (any status but OK) is not an error here:
// the caller sends it through the graph path, which decodes it or refuses it with its own
// words. So the core has no error text, only a short name per status.
#ifndef NPYIO_NATIVE_NPY_READ_H_
#define NPYIO_NATIVE_NPY_READ_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "npy_header.h"

namespace npyio {

// A batch reads its files in parallel from this many bytes on; a smaller batch is read in the
// calling thread, where the handoff would cost more than it saves.
constexpr size_t kParallelBytes = size_t{1} << 20;
// A batch whose output would take this many bytes or more is allocated only if some file of it
// has exactly the size the plan implies; otherwise (a shape no file holds, as a header that
// lied gives) the output has no rows, every file is doubted, and the graph path refuses them
// before it allocates anything.
constexpr size_t kCheckedBytes = size_t{64} << 20;

// Whether n items of `each` bytes reach `limit` bytes, without the product (which may
// overflow): from limit / each items on, rounded down, so a batch just under the limit counts
// too. Nothing of 0 bytes reaches a limit.
constexpr bool reaches(size_t n, size_t each, size_t limit) {
  return each != 0 && n >= limit / each;
}

// Whether the op reads `path` through TensorFlow's file systems rather than open(2): a path
// with a scheme ("gs://b/o", "ram://x", "file:///x").
bool has_scheme(std::string_view path);

// `name` as the core opens it, or "" where the core must doubt it: a NUL in it (open(2) would
// read a shorter path), or a scheme (the op's remote read, or the graph path, reads objects).
std::string local_path(std::string_view name);

enum class ReadStatus : int {
  OK = 0,
  OPEN_FAILED,      // open(2) failed: missing, unreadable, ...
  NOT_REGULAR,      // a directory, a FIFO, a device, ...
  SIZE_MISMATCH,    // the size is not header_len + payload_len
  SHORT_READ,       // the file ended before the bytes its size promised
  READ_FAILED,      // preadv(2) or fstat(2) failed
  HEADER_MISMATCH,  // the first header_len bytes differ from the expected header
  BAD_BOOL,         // a bool payload byte that is neither 0 nor 1
  CHANGED,          // the file's size, inode or mtime changed while it was read
  BAD_WINDOW,       // read_window's arguments: a negative window, rank > kMaxRank, an overflow
  NO_MEMORY,        // read_range_into's allocation failed (after the file was checked)
  OUTSIDE,          // read_window_placed: the window passes the array's edge under "error"
};

// The status's short name ("OK", "OPEN_FAILED", ...), for the fuzz driver and the tests.
const char* status_name(ReadStatus status);

// Reads the file at `path` into `out` (payload_len bytes) if it holds exactly `header`
// (header_len bytes, at most kMaxHeader) followed by payload_len bytes; with `check_bool`, every
// payload byte must be 0 or 1. Never throws, never blocks on a FIFO. `out` may be written even
// when the result is not OK; its contents are then meaningless.
ReadStatus read_npy(const char* path, const uint8_t* header, size_t header_len, uint8_t* out,
                    size_t payload_len, bool check_bool);

// Whether the file at `path` is a regular file of exactly `size` bytes now (stat(2): no open,
// no read). The op asks it of every file of a batch before it allocates a large output, so that
// a shape no file on disk holds (a header that lied) allocates nothing.
bool has_size(const char* path, size_t size);

// Reads `length` bytes at byte `offset` of the file at `path` into `out` if it is a regular
// file of exactly `file_size` bytes (the size the caller's plan recorded) that holds the range
// (offset + length <= file_size) and did not change while it was read. A length of 0 only
// checks the file. The rows readers' range read: the caller checks nothing of the bytes.
ReadStatus read_range(const char* path, uint64_t file_size, uint64_t offset, uint8_t* out,
                      size_t length);

// read_range with the output allocated only once the file is checked: `allocate(length,
// context)` is called after the file is open, regular, of exactly `file_size` bytes and holds
// the range, so that a range no file holds allocates nothing; a null from it is NO_MEMORY, with
// nothing read. Used where the caller's buffer is sized by the range (the op's strings).
using Allocate = uint8_t* (*)(size_t length, void* context);
ReadStatus read_range_into(const char* path, uint64_t file_size, uint64_t offset, size_t length,
                           Allocate allocate, void* context);

// A file whose rows read_rows reads: its path, its size as the plan recorded, the byte its rows
// start at, and whether its elements are in the other byte order than the machine's (each value
// is then swapped: swap_unit bytes at a time, the itemsize, or half of it for complex numbers).
struct RowFile {
  const char* path;
  uint64_t size;
  uint64_t data_offset;
  bool swap;
};

// A run of neighbouring rows of one file: rows [first, first + rows) of files[file].
struct RowRun {
  uint64_t file;
  uint64_t first;
  uint64_t rows;
};

// Reads each run's rows (row_bytes each) into `out` (which holds the sum of the runs' rows
// times row_bytes, a product the caller has checked), one after another, one pread per run,
// keeping each file open across the runs of the call (at most kRowFilesOpen at once; more are
// opened per run). A file is read only if it is a regular file of exactly its recorded size,
// that size is its data_offset plus whole rows, and it holds the run; it must not change
// (stat) from its first run to the end of the call. statuses[i] is run i's: a run not OK has
// its bytes zeroed (BAD_WINDOW for a run outside its file or the arguments, before anything is
// opened; BAD_BOOL, with check_bool, for a byte other than 0 or 1). Never throws.
void read_rows(const RowFile* files, size_t file_count, const RowRun* runs, size_t run_count,
               size_t row_bytes, size_t swap_unit, bool check_bool, uint8_t* out,
               ReadStatus* statuses);

// The most files read_rows keeps open at once.
constexpr size_t kRowFilesOpen = 64;

// Checks a whole file already read into memory (`data`, `size` bytes: what a file system
// other than the local disk gave, `remote.cc`): OK if it is exactly `header` (header_len bytes,
// at most kMaxHeader) followed by payload_len bytes, with every payload byte 0 or 1 for
// `check_bool`. Then the payload is `data + header_len`. Reads nothing, writes nothing.
ReadStatus check_npy(const uint8_t* data, size_t size, const uint8_t* header, size_t header_len,
                     size_t payload_len, bool check_bool);

// What read_npy_parsed requires of a file's own header: the dtype (its grammar code, "f4") in
// the machine's byte order and C order, `rank` dims (negative: any rank), each entry of `dims`
// that is not negative, a header text of at most max_header_size bytes and a file of at most
// max_file_size bytes.
struct Wanted {
  const char* code;
  int rank;
  const int64_t* dims;
  size_t max_header_size;
  uint64_t max_file_size;
};

// The room for a file's payload, asked once its header is parsed and checked and the file's
// size is exactly its header plus that payload (so a header that lies allocates nothing); a
// null for a payload of some bytes is NO_MEMORY, with nothing read.
using AllocateFor = uint8_t* (*)(const NpyHeader& header, void* context);

// Reads the file at `path` whatever its shape: its header parsed here (parse_header), checked
// against `want`, then its payload read into the room allocate() gives, with the checks of
// read_npy (bools 0 or 1 with check_bool, the file unchanged while read). `header` gets the
// parsed header when the result is OK. HEADER_MISMATCH where the parser doubts the header or it
// is not what `want` says; SIZE_MISMATCH where the file is not exactly header plus payload, or
// passes max_file_size. Never throws, never blocks on a FIFO.
ReadStatus read_npy_parsed(const char* path, const Wanted& want, bool check_bool,
                           AllocateFor allocate, void* context, NpyHeader* header);

// The longest header the core compares (a .npy header is at most a few KiB unless a writer
// pads it; a longer one is simply doubted and left to the graph path).
constexpr size_t kMaxHeader = 65536;

// The most axes read_window takes (numpy's own limit is 64; a volume has 3 or 4).
constexpr int kMaxRank = 32;

// Reads the window of the C-order array the file at `path` holds, its header parsed here
// (parse_header) and checked against `want`, whose rank and dims must be exact: the shape the
// caller placed `start` by, and the file exactly that header plus prod(dims) * itemsize bytes
// (else a doubt, as read_npy_parsed). The window is
// [start[i], start[i] + window[i]) on each axis; start may be negative and the window may pass
// the array's edges: elements outside the array are set to `fill` (itemsize bytes; all zeros
// if fill is null), and only the window's intersection with the array is read. `out` holds
// prod(window) * itemsize bytes, C order. `bytes_read` (if not null) gets the bytes requested
// from the file system (the head read to parse the header included). With check_bool, every
// byte read must be 0 or 1.
//
// BAD_WINDOW, before anything is opened, for: want.rank < 0 or > kMaxRank, itemsize 0, a
// negative dim or window[i], start[i] + window[i] past int64, or a payload or window size
// (elements times itemsize) past int64. The window's contiguous runs in the file are read by
// preadv straight into `out`; runs at most kWindowGap bytes apart share one call, read into a
// bounce buffer (kWindowBounce bytes at most, allocated by the call and freed before it
// returns) and copied out, so the bytes read stay within the window's, plus one gap per run,
// plus the head. rank 0 (a scalar): the window is the whole element.
ReadStatus read_window_parsed(const char* path, const Wanted& want, const int64_t* start,
                              const int64_t* window, size_t itemsize, const uint8_t* fill,
                              uint8_t* out, bool check_bool, uint64_t* bytes_read);

// Where a window starts on each axis it crops, by the array's own dims: npyio's rule, which the
// graph path follows (npyio/_graph/window.py's `starts`; npyio/_format/window.py's
// `Window.starts` is its reference). Per cropped axis i (axes[i], of size sizes[i], on a dim d):
// lo = min(0, d - size) and span = |d - size|;
// - RANDOM: lo + min(floor(draw[i] * (span + 1)), span), draw[i] in [0, 1); with 2k draws,
//   where draw[k + i] (a foreground voxel's index, truncated) is >= 0, that index minus
//   size / 2 instead, clamped to [lo, lo + span];
// - CENTER: floor((d - size) / 2);
// - FIXED: fixed[i].
// Axes not cropped start at 0. Then the policy: ERROR refuses a window that passes an edge
// (OUTSIDE); TRIM and ERROR move a negative start to 0; PAD keeps it (past the edges, `fill`).
enum class WindowStart : int { RANDOM = 0, CENTER, FIXED };
enum class WindowPolicy : int { ERROR = 0, TRIM, PAD };
struct Placement {
  WindowStart start;
  WindowPolicy policy;
  int count;              // k: the axes cropped
  const int* axes;        // each in [0, rank), distinct
  const int64_t* sizes;   // the window's size on each (>= 0)
  const int64_t* fixed;   // FIXED: the start on each
  const double* draw;     // RANDOM: k or 2k numbers (above)
  int draw_count;
};

// The window's start on every axis of an array of shape `dims` (rank axes) by `place`, in
// `start`; `fits` gets whether it lies inside the array before the policy moved it. False
// where the placement cannot be computed: an axis out of range, a size below 0, draws of
// another count, a draw not finite or past int64, or an overflow.
bool place_window(const Placement& place, const int64_t* dims, int rank, int64_t* start,
                  bool* fits);

// read_window_parsed with the window placed by the file's own shape: the header parsed and
// checked against `want` (whose dims may be negative: any size), the window placed on its dims
// by place_window, then read as read_window_parsed reads it. `dims` (want.rank entries) gets
// the file's shape, read_window_parsed's `start` never leaving the core. BAD_WINDOW where
// place_window fails, OUTSIDE where the window passes an edge under ERROR: both doubts, after
// the header only. One open and one head read per file, whatever the window.
ReadStatus read_window_placed(const char* path, const Wanted& want, const Placement& place,
                              const int64_t* window, size_t itemsize, const uint8_t* fill,
                              uint8_t* out, bool check_bool, int64_t* dims, uint64_t* bytes_read);

// The largest gap between two runs of a window that one preadv reads through (a page).
constexpr size_t kWindowGap = 4096;
// The largest call with gaps that read_window reads into a bounce buffer and copies out,
// rather than by preadv into `out` and the sink.
constexpr size_t kWindowBounce = 256 * 1024;

// Where a window's first call is not in the page cache (a cold file), read_window first
// advises (POSIX_FADV_WILLNEED) the file ranges of all its calls, merged where at most this many
// bytes apart, so that the disk has them queued rather than each call waiting in turn.
constexpr size_t kAdviseGap = 64 * 1024;

// How many windows read_window has found cold and advised, by every thread together (for the
// tests: whether a file that was evicted took that path).
uint64_t windows_advised();

// A file's parsed header is kept, by the file's device and inode, while its size, mtime and ctime
// stay as they were: a file read again (crops_per_file windows of one case, an epoch after
// another) has its header read and parsed once per process. A file changed within a second
// before it was read is not kept (git's "racy clean" rule: timestamps are coarser than writes,
// so a rewrite of the same size in the same tick would look unchanged). At most this many
// headers are kept; a full cache is emptied and filled again.
constexpr size_t kHeaderCacheEntries = 8192;

// How many headers read_npy_parsed and read_window_placed have read from their files rather
// than from the cache, by every thread together (for the tests).
uint64_t headers_read();

// The bytes of read_window's bounce buffers allocated now, by every thread together: 0 whenever
// no read_window call is running (the fuzz driver checks that none outlives its call).
size_t bounce_bytes_held();

}  // namespace npyio

#endif  // NPYIO_NATIVE_NPY_READ_H_
