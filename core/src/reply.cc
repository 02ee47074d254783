#include "lockstep/reply.h"

#include <cstdio>

namespace lockstep {

std::string to_resp(const Reply& r) {
  using T = Reply::Type;
  switch (r.type) {
    case T::Status: return "+" + r.str + "\r\n";
    case T::Error: return "-" + r.str + "\r\n";
    case T::Integer: return ":" + std::to_string(r.integer) + "\r\n";
    case T::Bulk: return "$" + std::to_string(r.str.size()) + "\r\n" + r.str + "\r\n";
    case T::Nil: return "$-1\r\n";
    case T::NilArray: return "*-1\r\n";
    case T::Array: {
      std::string out = "*" + std::to_string(r.elements.size()) + "\r\n";
      for (const auto& e : r.elements) out += to_resp(e);
      return out;
    }
    case T::Timeout: return "-LOCKSTEP timeout\r\n";
    case T::IoError: return "-LOCKSTEP " + r.str + "\r\n";
  }
  return {};
}

namespace {

// redis-cli quotes bulk strings with sdscatrepr: printable bytes as-is, the usual C
// escapes, everything else as \xHH.
std::string cli_quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\a': out += "\\a"; break;
      case '\b': out += "\\b"; break;
      default:
        if (c >= 0x20 && c < 0x7f) {
          out += static_cast<char>(c);
        } else {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02x", c);
          out += buf;
        }
    }
  }
  return out + "\"";
}

void cli_text(const Reply& r, const std::string& indent, std::string& out) {
  using T = Reply::Type;
  switch (r.type) {
    case T::Status: out += r.str; break;
    case T::Error: out += "(error) " + r.str; break;
    case T::Integer: out += "(integer) " + std::to_string(r.integer); break;
    case T::Bulk: out += cli_quote(r.str); break;
    case T::Nil:
    case T::NilArray: out += "(nil)"; break;
    case T::Timeout: out += "(lockstep) timeout"; break;
    case T::IoError: out += "(lockstep) " + r.str; break;
    case T::Array: {
      if (r.elements.empty()) {
        out += "(empty array)";
        break;
      }
      // redis-cli right-aligns the element numbers to the widest index and indents
      // nested arrays under the number.
      const std::string width_probe = std::to_string(r.elements.size());
      for (size_t i = 0; i < r.elements.size(); ++i) {
        std::string num = std::to_string(i + 1);
        std::string label = std::string(width_probe.size() - num.size(), ' ') + num + ") ";
        if (i > 0) out += "\n" + indent;
        out += label;
        cli_text(r.elements[i], indent + std::string(label.size(), ' '), out);
      }
      break;
    }
  }
}

}  // namespace

std::string to_cli_text(const Reply& r) {
  std::string out;
  cli_text(r, "", out);
  return out;
}

std::string to_short_text(const Reply& r) {
  using T = Reply::Type;
  switch (r.type) {
    case T::Status: return r.str;
    case T::Error: return r.str;
    case T::Integer: return std::to_string(r.integer);
    case T::Bulk: return cli_quote(r.str);
    case T::Nil:
    case T::NilArray: return "nil";
    case T::Timeout: return "timeout";
    case T::IoError: return r.str;
    case T::Array: {
      std::string out = "[";
      for (size_t i = 0; i < r.elements.size(); ++i) {
        if (i) out += " ";
        out += to_short_text(r.elements[i]);
      }
      return out + "]";
    }
  }
  return {};
}

}  // namespace lockstep
