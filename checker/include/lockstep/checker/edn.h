// A reader for the subset of EDN that Jepsen histories use: maps, vectors, lists, keywords,
// strings, integers, nil and true/false (plus floats, read as doubles). It produces JSON:
// keywords become their name without the colon (:invoke -> "invoke"), lists become arrays,
// map keys become strings. Anything else (sets, tags, symbols) is an error that says where.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace lockstep::checker {

// Parses exactly one EDN value from `text` (surrounding whitespace and commas allowed).
// On failure returns false and sets `error` to "column N: why".
bool parse_edn(std::string_view text, nlohmann::json& out, std::string& error);

}  // namespace lockstep::checker
