// Internal: the readers behind parse_history_text, one per format, and what the two
// Jepsen formats share: turning an operation's fields (process, type, f, value, ...) into
// an Event. Each reader fails with "name:line:column: why".
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "lockstep/checker/history.h"

namespace lockstep::checker::detail {

bool read_json_lines(std::string_view text, const std::string& name, History& out, std::string& error);
bool read_edn_history(std::string_view text, const std::string& name, History& out, std::string& error);
bool read_jepsen_log(std::string_view text, const std::string& name, History& out, std::string& error);

// What one Jepsen operation turned into: an event, nothing (the nemesis's operations, which
// are faults, not operations on the object), or an error.
enum class OpResult { Event, Skip, Error };

// :process — an integer, or :nemesis (Skip).
OpResult jepsen_process(const nlohmann::json& p, Event& e, std::string& why);
// :type — :invoke, :ok, :fail or :info.
bool jepsen_type(const nlohmann::json& t, EventType& out, std::string& why);
// A whole Jepsen operation map, {:process 0, :type :invoke, :f :read, ...}.
OpResult jepsen_op(const nlohmann::json& m, Event& e, std::string& why);

}  // namespace lockstep::checker::detail
