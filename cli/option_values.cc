#include "option_values.h"

#include <algorithm>

#include "lockstep/profiles.h"
#include "lockstep/text.h"

namespace lockstep::cli {

std::string unknown_value(const std::string& what, const std::string& given, const std::vector<std::string>& known,
                          const std::string& plural) {
  const std::string best = nearest_name(given, known);
  std::string list;
  for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
  return "unknown " + what + " \"" + given + "\"" + (best.empty() ? "" : " (did you mean \"" + best + "\"?)") + "\n" +
         plural + ": " + list;
}

std::string first_unknown(const std::string& what, const std::vector<std::string>& given,
                          const std::vector<std::string>& known, const std::string& plural) {
  for (const auto& g : given) {
    if (std::find(known.begin(), known.end(), g) == known.end()) return unknown_value(what, g, known, plural);
  }
  return "";
}

std::string expand_profiles(const std::vector<std::string>& given, std::vector<std::string>& out) {
  out.clear();
  std::vector<std::string> libraries;
  for (const auto& p : library_profiles()) {
    if (std::find(libraries.begin(), libraries.end(), p.library) == libraries.end()) libraries.push_back(p.library);
  }
  auto add = [&](const std::string& name) {
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  };
  for (const auto& g : given) {
    if (g == "all") {
      for (const auto& p : profile_names()) add(p);
    } else if (profile_named(g)) {
      add(g);
    } else if (std::find(libraries.begin(), libraries.end(), g) != libraries.end()) {
      for (const auto& p : library_profiles()) {
        if (p.library == g) add(p.name);
      }
    } else {
      // A near miss may be a library or one version of it; both are worth naming.
      std::vector<std::string> known = libraries;
      for (const auto& p : profile_names()) known.push_back(p);
      const std::string best = nearest_name(g, known);
      return "unknown profile \"" + g + "\"" + (best.empty() ? "" : " (did you mean \"" + best + "\"?)") +
             "\nProfiles: a library alone for all its versions (" +
             [&] {
               std::string s;
               for (const auto& l : libraries) s += (s.empty() ? "" : ", ") + l;
               return s;
             }() +
             "), or LIBRARY@VERSION as `lockstep profiles` lists them, or all";
    }
  }
  return "";
}

}  // namespace lockstep::cli
