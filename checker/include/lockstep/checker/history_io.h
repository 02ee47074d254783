// Reading histories from files in the formats the checker accepts:
//  - json:       lockstep JSON lines, one Event object per line (history.h from_json).
//  - edn:        Jepsen EDN, one map per line: {:process 0, :type :invoke, :f :read,
//                :key "0", :value nil, :time 123, :index 4}. :time is nanoseconds;
//                unknown keys (e.g. :index, :error) are kept in Event::extra. The whole
//                file may also be one vector: "[" before the first map, "]" after the last.
//  - jepsen-log: Jepsen log lines "INFO  jepsen.util - 1\t:invoke\t:cas\t[3 0]", with
//                tab-separated process, type, f, value and an optional error (e.g.
//                :timed-out, kept as extra.error). Lines without "jepsen.util - " and a
//                tab (other log output) are skipped. These histories carry no times.
//  - auto:       per file, from its first non-blank line: {" is json, {: or [{: is edn, anything
//                else is jepsen-log.
// In every format blank lines are skipped and nemesis operations (:process :nemesis) are
// ignored. A malformed line fails the whole file with "name:line: why".
#pragma once

#include <string>
#include <string_view>

#include "lockstep/checker/history.h"

namespace lockstep::checker {

enum class Format { Auto, Json, Edn, JepsenLog };

const char* to_string(Format f);
// Accepts auto, json (or jsonl), edn, jepsen-log (or log).
bool parse_format(const std::string& s, Format& out);
// The format `auto` picks for this text (never Auto).
Format detect_format(std::string_view text);

// `name` is used in error messages only.
bool parse_history_text(std::string_view text, const std::string& name, Format fmt, History& out,
                        std::string& error);
bool read_history(const std::string& path, Format fmt, History& out, std::string& error);

}  // namespace lockstep::checker
