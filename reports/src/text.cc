#include "lockstep/reports/text.h"

namespace lockstep::reports {

std::string xml_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t' && c != '\r') break;
        out += c;
    }
  }
  return out;
}

std::string md_cell(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|' || c == '\\' || c == '<' || c == '`') out += '\\';
    out += (c == '\n' || c == '\r') ? ' ' : c;
  }
  return out;
}

std::string node_label(int64_t node_index) { return "node-" + std::to_string(node_index + 1); }

std::string truncate_text(const std::string& s, size_t max) {
  if (s.size() <= max) return s;
  size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return s.substr(0, cut) + "…";
}

std::string comma_list(const std::set<std::string>& names, const char* none) {
  std::string out;
  for (const auto& x : names) out += (out.empty() ? "" : ", ") + x;
  return out.empty() ? none : out;
}

}  // namespace lockstep::reports
