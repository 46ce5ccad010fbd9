// The .npy header parser of npyio's TensorFlow-free core: a file's first bytes in, its dtype,
// order and shape out, so that the kernel can read files whose shape it was not told.
//
// The specification is npyio's grammar (npyio/_format/npy.py). This parser takes a strict
// subset of it and doubts everything else: whatever it accepts, the Python grammar and the
// graph parser accept with the same dtype, byte order, order and shape (held by the
// differential fuzz, tests/fuzz/headers.py). It doubts, where the grammar may accept:
// Python 2 long suffixes ("2L"), "-0", the trailing lines that only numpy's Python 2 filter
// takes, and more than kMaxHeaderRank dims. A doubted header is not an error here: the caller
// sends the file to the graph path, which decides, with its own words. So this parser has no
// error text.
#ifndef NPYIO_NATIVE_NPY_HEADER_H_
#define NPYIO_NATIVE_NPY_HEADER_H_

#include <cstddef>
#include <cstdint>

namespace npyio {

// The most dims a header the parser accepts may have (the read_window limit too).
constexpr int kMaxHeaderRank = 32;

// The grammar's limits (npyio/_format/npy.py: MAX_DIM_DIGITS, MAX_NBYTES).
constexpr int kMaxDimDigits = 18;
constexpr uint64_t kMaxNbytes = uint64_t{1} << 62;

enum class HeaderStatus : int {
  OK = 0,
  SHORT,  // the fixed fields are good but the header runs past `size`: read data_offset bytes
  DOUBT,  // anything else: the graph path decides
};

struct NpyHeader {
  int version = 0;        // 1, 2 or 3 (the minor version is always 0)
  char code[4] = {0};     // the descr's type code, as the grammar names it: "f4", "c16", "b1"
  size_t itemsize = 0;    // bytes an element
  bool little_endian = true;  // the payload's byte order ("|" and "=" are the machine's)
  bool fortran_order = false;
  int rank = 0;
  int64_t shape[kMaxHeaderRank] = {0};
  uint64_t data_offset = 0;    // where the payload starts
  uint64_t payload_bytes = 0;  // prod(shape) * itemsize
};

// Parses the header at the start of `data` (`size` bytes of a file, from its first byte), with
// the header text limited to `max_header_size` bytes (the grammar's max_header_size). OK fills
// `out`. SHORT sets only out->data_offset: the header is whole in that many bytes. DOUBT says
// nothing. Never reads past `size`, never allocates, never throws.
HeaderStatus parse_header(const uint8_t* data, size_t size, size_t max_header_size,
                          NpyHeader* out);

// The status's short name ("OK", "SHORT", "DOUBT"), for the fuzz driver.
const char* header_status_name(HeaderStatus status);

}  // namespace npyio

#endif  // NPYIO_NATIVE_NPY_HEADER_H_
