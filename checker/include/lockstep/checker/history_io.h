// Reading histories from files in the formats the checker accepts:
//
//  - json:       lockstep JSON lines, one Event object per line (history.h from_json).
//  - edn:        a Jepsen or Knossos history in EDN (edn.h): operation maps such as
//                {:process 0, :type :invoke, :f :read, :key "0", :value nil, :time 123}
//                either as the file's top-level forms one after another, or as the
//                elements of one top-level vector [...] or list (...). Maps may span
//                lines; comments (;), discarded forms (#_) and commas may sit anywhere;
//                a tagged map (#jepsen.history.Op{...}) reads as its map. :process is an
//                integer or :nemesis, :type one of :invoke :ok :fail :info, :f a keyword;
//                :value, :key (any value; non-strings by their EDN-as-JSON text), :time
//                (nanoseconds) and :thread are read, other keys (:index, :error, ...) are
//                kept in Event::extra.
//  - jepsen-log: Jepsen log lines, "INFO  jepsen.util - 1 :invoke :cas [3 0]": after
//                "jepsen.util - ", the process, type, f, then optionally the value and an
//                error (:timed-out, kept as extra.error), each one EDN form, separated by
//                any run of spaces or tabs. Other lines are skipped. No times.
//  - auto:       per file, from its first form (after blank lines and ; comments):
//                {" is json; {: or a [, ( or # is edn (unless that line names
//                jepsen.util); anything else is jepsen-log.
//
// In every format the nemesis's operations (:process :nemesis) are skipped. Bad input
// fails the whole file with "name:line:column: why"; it never crashes or hangs.
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
