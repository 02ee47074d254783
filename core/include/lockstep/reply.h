// Reply is one RESP2 value as a Redis server sends it, plus the two outcomes a client
// sees when no value arrives: a timeout (the command may or may not have run) and an I/O
// error (connection refused or reset). Lock code branches on these values; nothing is
// thrown.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lockstep {

struct Reply {
  enum class Type : uint8_t {
    Status,    // +OK
    Error,     // -ERR ...
    Integer,   // :1
    Bulk,      // $3 foo
    Nil,       // $-1 (null bulk string)
    Array,     // *2 ...
    NilArray,  // *-1 (null array, e.g. EXEC aborted by WATCH)
    Timeout,   // no reply within the caller's timeout: outcome unknown
    IoError,   // connection refused or reset: in the simulator the command did not run
  };

  Type type = Type::Nil;
  int64_t integer = 0;
  std::string str;  // status text, error text, bulk payload, or transport reason
  std::vector<Reply> elements;

  static Reply status(std::string s) { return {Type::Status, 0, std::move(s), {}}; }
  static Reply ok() { return status("OK"); }
  static Reply error(std::string s) { return {Type::Error, 0, std::move(s), {}}; }
  static Reply integer_of(int64_t v) { return {Type::Integer, v, {}, {}}; }
  static Reply bulk(std::string s) { return {Type::Bulk, 0, std::move(s), {}}; }
  static Reply nil() { return {}; }
  static Reply nil_array() { return {Type::NilArray, 0, {}, {}}; }
  static Reply array(std::vector<Reply> e) { return {Type::Array, 0, {}, std::move(e)}; }
  static Reply timeout() { return {Type::Timeout, 0, "timeout", {}}; }
  static Reply io_error(std::string why) { return {Type::IoError, 0, std::move(why), {}}; }

  bool is_error() const { return type == Type::Error; }
  bool is_nil() const { return type == Type::Nil || type == Type::NilArray; }
  // True when the server's answer never reached us: the command may have taken effect.
  bool is_unknown() const { return type == Type::Timeout || type == Type::IoError; }
  bool is_ok() const { return type == Type::Status && str == "OK"; }
  bool is_integer(int64_t v) const { return type == Type::Integer && integer == v; }

  friend bool operator==(const Reply&, const Reply&) = default;
};

// The RESP2 wire form, byte for byte as redis-server writes it. Timeout and IoError have
// no wire form; they are written as errors with a "LOCKSTEP" prefix.
std::string to_resp(const Reply& r);

// How redis-cli prints the reply on a terminal ("OK", "(integer) 1", "\"foo\"", "(nil)",
// "1) ..."), used by sim-shell and in failure messages.
std::string to_cli_text(const Reply& r);

// A short one-line form for histories and logs: OK, 1, "foo", nil, [..], ERR ..., timeout.
std::string to_short_text(const Reply& r);

}  // namespace lockstep
