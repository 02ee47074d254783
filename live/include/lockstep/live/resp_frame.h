// RESP framing for the fault proxy: where one message ends in a byte stream, and what it
// says. The proxy drops, delays and observes whole commands and replies, never parts of
// them, so it must know their boundaries; it reads what clients send (arrays of bulk
// strings) and what servers answer (any RESP2 value, and the RESP3 types a client that
// said HELLO 3 gets).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/reply.h"

namespace lockstep::live {

// The length of the first complete message in `bytes`: nullopt if it is not complete
// yet, 0 if the bytes are not RESP (the proxy then passes them on as they come).
std::optional<size_t> resp_message_length(std::string_view bytes);

// A command as a client sends it (an array of bulk strings, or an inline command line);
// empty if the message is something else.
std::vector<std::string> resp_command(std::string_view message);

// A reply as lockstep's Reply (RESP3 maps and sets read as arrays, doubles and big
// numbers as bulk strings, booleans as integers).
Reply resp_reply(std::string_view message);

}  // namespace lockstep::live
