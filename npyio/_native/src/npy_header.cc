// The .npy header parser of the core (see npy_header.h). A hand-written scanner over the
// grammar of npyio/_format/npy.py, one position moving forward: every read is checked against
// the text's end, every number against its limit.
#include "npy_header.h"

#include <cstring>

namespace npyio {

const char* header_status_name(HeaderStatus status) {
  switch (status) {
    case HeaderStatus::OK: return "OK";
    case HeaderStatus::SHORT: return "SHORT";
    case HeaderStatus::DOUBT: return "DOUBT";
  }
  return "UNKNOWN";
}

namespace {

constexpr uint8_t kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

// The grammar's type codes (npy.CODES) and their item sizes.
struct Code {
  const char* name;
  size_t itemsize;
};
constexpr Code kCodes[] = {
    {"b1", 1}, {"i1", 1}, {"i2", 2}, {"i4", 4}, {"i8", 8}, {"u1", 1},  {"u2", 2},
    {"u4", 4}, {"u8", 8}, {"f2", 2}, {"f4", 4}, {"f8", 8}, {"c8", 8}, {"c16", 16},
};

bool machine_little_endian() {
  const uint16_t one = 1;
  uint8_t first;
  std::memcpy(&first, &one, 1);
  return first == 1;
}

// The header text and a position in it.
class Scanner {
 public:
  Scanner(const uint8_t* text, size_t size) : p_(text), end_(text + size) {}

  bool done() const { return p_ == end_; }
  bool peek(char c) const { return p_ != end_ && *p_ == static_cast<uint8_t>(c); }
  bool take(char c) {
    if (!peek(c)) return false;
    ++p_;
    return true;
  }
  // WS: what Python's tokenizer skips between tokens, as the grammar has it.
  void skip_ws() {
    while (p_ != end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r' || *p_ == '\f')) {
      ++p_;
    }
  }
  void skip_any(const char* set) {
    while (p_ != end_ && *p_ != 0 && std::strchr(set, *p_) != nullptr) ++p_;
  }
  // A quoted literal ('...' or "..."): its body, which holds no quote or backslash of either
  // kind (the grammar's keys and descrs hold neither: anything else is doubted).
  bool quoted(const uint8_t** body, size_t* len) {
    if (p_ == end_ || (*p_ != '\'' && *p_ != '"')) return false;
    const uint8_t quote = *p_++;
    const uint8_t* start = p_;
    while (p_ != end_ && *p_ != quote) {
      if (*p_ == '\\' || *p_ == '\'' || *p_ == '"') return false;
      ++p_;
    }
    if (p_ == end_) return false;
    *body = start;
    *len = static_cast<size_t>(p_ - start);
    ++p_;
    return true;
  }
  // An exact word ("True", "False").
  bool word(const char* w) {
    const size_t n = std::strlen(w);
    if (static_cast<size_t>(end_ - p_) < n || std::memcmp(p_, w, n) != 0) return false;
    p_ += n;
    return true;
  }
  // A dim: "0" or [1-9][0-9]*, at most kMaxDimDigits digits. A minus sign ("-0" is 0 in the
  // grammar, other negatives are refused there) is doubted.
  bool dim(int64_t* value) {
    if (p_ == end_ || *p_ < '0' || *p_ > '9') return false;
    if (*p_ == '0') {
      ++p_;
      *value = 0;
      return p_ == end_ || *p_ < '0' || *p_ > '9';  // "01" is not a dim
    }
    int64_t v = 0;
    int digits = 0;
    while (p_ != end_ && *p_ >= '0' && *p_ <= '9') {
      if (++digits > kMaxDimDigits) return false;  // the grammar refuses it: too large
      v = v * 10 + (*p_ - '0');  // 18 digits stay within int64
      ++p_;
    }
    *value = v;
    return true;
  }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

bool same(const uint8_t* body, size_t len, const char* word) {
  return len == std::strlen(word) && std::memcmp(body, word, len) == 0;
}

// descr := quoted([<>|=] code): the code's item size and the byte order.
bool parse_descr(Scanner& s, NpyHeader* out) {
  const uint8_t* body;
  size_t len;
  if (!s.quoted(&body, &len) || len == 0) return false;
  char order = '|';
  if (*body == '<' || *body == '>' || *body == '|' || *body == '=') {
    order = static_cast<char>(*body);
    ++body;
    --len;
  }
  for (const Code& code : kCodes) {
    if (same(body, len, code.name)) {
      std::memcpy(out->code, code.name, len);
      out->code[len] = '\0';
      out->itemsize = code.itemsize;
      out->little_endian = order == '<' || (order != '>' && machine_little_endian());
      return true;
    }
  }
  return false;
}

// shape := "(" WS ")" | "(" WS dim WS "," WS ")" | "(" WS dim (WS "," WS dim)+ WS [","] WS ")"
bool parse_shape(Scanner& s, NpyHeader* out) {
  if (!s.take('(')) return false;
  s.skip_ws();
  out->rank = 0;
  if (s.take(')')) return true;
  bool comma = false;  // whether the last dim was followed by a comma
  while (true) {
    if (out->rank == kMaxHeaderRank) return false;
    if (!s.dim(&out->shape[out->rank])) return false;
    ++out->rank;
    s.skip_ws();
    comma = s.take(',');
    s.skip_ws();
    if (s.take(')')) return comma || out->rank >= 2;  // "(2)" is not a tuple
    if (!comma) return false;
  }
}

// The dict's three entries, each once, in any order, with an optional comma after the last.
bool parse_dict(Scanner& s, NpyHeader* out) {
  if (!s.take('{')) return false;
  bool seen[3] = {false, false, false};
  for (int entry = 0; entry < 3; ++entry) {
    s.skip_ws();
    const uint8_t* key;
    size_t len;
    if (!s.quoted(&key, &len)) return false;
    const int which = same(key, len, "descr") ? 0
                      : same(key, len, "fortran_order") ? 1
                      : same(key, len, "shape") ? 2
                      : -1;
    if (which < 0 || seen[which]) return false;
    seen[which] = true;
    s.skip_ws();
    if (!s.take(':')) return false;
    s.skip_ws();
    bool ok = false;
    if (which == 0) ok = parse_descr(s, out);
    if (which == 1) {
      ok = s.word("True");
      out->fortran_order = ok;
      ok = ok || s.word("False");
    }
    if (which == 2) ok = parse_shape(s, out);
    if (!ok) return false;
    s.skip_ws();
    if (entry < 2 && !s.take(',')) return false;
  }
  s.take(',');
  s.skip_ws();
  return s.take('}');
}

// TRAIL_V3: [ \t\f]* then, optionally, a line break and then WS ending in a line break. What
// np.load takes after the dict in every version; the grammar's other trails are doubted.
bool parse_trail(Scanner& s) {
  s.skip_any(" \t\f");
  if (s.done()) return true;
  if (!s.take('\n') && !s.take('\r')) return false;
  bool ends_in_break = true;
  while (!s.done()) {
    if (s.take('\n') || s.take('\r')) {
      ends_in_break = true;
    } else if (s.take(' ') || s.take('\t') || s.take('\f')) {
      ends_in_break = false;
    } else {
      return false;
    }
  }
  return ends_in_break;
}

}  // namespace

HeaderStatus parse_header(const uint8_t* data, size_t size, size_t max_header_size,
                          NpyHeader* out) {
  if (size < 8 || std::memcmp(data, kMagic, sizeof(kMagic)) != 0) return HeaderStatus::DOUBT;
  const uint8_t major = data[6];
  if (data[7] != 0 || major < 1 || major > 3) return HeaderStatus::DOUBT;
  const size_t len_size = major == 1 ? 2 : 4;
  if (size < 8 + len_size) return HeaderStatus::DOUBT;
  uint64_t hlen = 0;
  for (size_t i = 0; i < len_size; ++i) hlen |= uint64_t{data[8 + i]} << (8 * i);
  if (hlen > max_header_size) return HeaderStatus::DOUBT;
  const uint64_t offset = 8 + len_size + hlen;
  if (size < offset) {
    out->data_offset = offset;
    return HeaderStatus::SHORT;
  }
  const uint8_t* text = data + 8 + len_size;
  for (uint64_t i = 0; i < hlen; ++i) {  // the grammar is ASCII: printable, or its whitespace
    const uint8_t c = text[i];
    if (c >= 0x7f || (c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f')) {
      return HeaderStatus::DOUBT;
    }
  }
  NpyHeader h;
  Scanner s(text, hlen);
  s.skip_any(" \t");  // LEAD
  if (!parse_dict(s, &h) || !parse_trail(s)) return HeaderStatus::DOUBT;
  // The grammar's size limit: prod(max(d, 1)) * itemsize below 2**62, zero dims included.
  uint64_t bound = h.itemsize, count = 1;
  for (int i = 0; i < h.rank; ++i) {
    const uint64_t d = static_cast<uint64_t>(h.shape[i]);
    if (__builtin_mul_overflow(bound, d == 0 ? 1 : d, &bound) || bound >= kMaxNbytes) {
      return HeaderStatus::DOUBT;
    }
    count *= d;  // at most bound / itemsize: no overflow
  }
  if (bound >= kMaxNbytes) return HeaderStatus::DOUBT;  // a rank-0 shape: the item alone
  h.version = major;
  h.data_offset = offset;
  h.payload_bytes = count * h.itemsize;
  *out = h;
  return HeaderStatus::OK;
}

}  // namespace npyio
