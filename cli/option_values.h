// Option values that name something lockstep knows — an algorithm, a library profile, a
// fault kind, a model, a history format. A value that names nothing gets the message a
// mistyped command gets: the nearest name, if one is close, and the list to choose from;
// and a library named alone stands for every version of it.
#pragma once

#include <string>
#include <vector>

namespace lockstep::cli {

// `unknown algorithm "redison" (did you mean "redisson"?)` and, on a second line, the
// names to choose from ("Algorithms: setnx, ..."), without a trailing newline. `what` is
// the singular ("algorithm"), `plural` the list's title ("Algorithms").
std::string unknown_value(const std::string& what, const std::string& given, const std::vector<std::string>& known,
                          const std::string& plural);

// The first of `given` not in `known`, as unknown_value says it; "" when all are known.
std::string first_unknown(const std::string& what, const std::vector<std::string>& given,
                          const std::vector<std::string>& known, const std::string& plural);

// Profiles as a user may give them: LIBRARY@VERSION, a library alone for every version of
// it in the order `lockstep profiles` lists them, or "all". Returns "" and fills `out`
// (each profile once, in the order given), or says what is wrong.
std::string expand_profiles(const std::vector<std::string>& given, std::vector<std::string>& out);

}  // namespace lockstep::cli
