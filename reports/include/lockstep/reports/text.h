// Small text helpers shared by the report writers: escaping for HTML/XML and Markdown,
// and the human forms of times and process names that every report uses alike.
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "lockstep/text.h"

namespace lockstep::reports {

// Escapes & < > " ' so the text is safe in HTML and XML element content and attributes;
// control characters XML 1.0 forbids are dropped (they would make a JUnit file invalid).
std::string xml_escape(const std::string& s);

// Makes text safe inside a Markdown table cell or paragraph: escapes | and backslash,
// and turns newlines into spaces so a cell stays on one line.
std::string md_cell(const std::string& s);

using lockstep::format_duration;

// The names joined with ", ", or `none` when there are none.
std::string comma_list(const std::set<std::string>& names, const char* none = "none");

// "client-3" for process 3, "node-1" for node index 0.
std::string node_label(int64_t node_index);

// Cuts `s` to at most `max` bytes on a UTF-8 boundary, marking the cut with an ellipsis.
std::string truncate_text(const std::string& s, size_t max);

}  // namespace lockstep::reports
