// Turns the PATH arguments of run-like commands into scenarios: files are taken as they
// are, directories contribute their *.json files and those of their subdirectories (in
// path order, schema files skipped). Every problem is reported, one line each, before anything runs.
#pragma once

#include <string>
#include <vector>

#include "lockstep/runner/scenario.h"

namespace lockstep::cli {

struct LoadedScenario {
  runner::Scenario scenario;
  std::string path;  // as the user can pass it back to `lockstep run`
};

// Returns false (and prints the errors to stderr) if any file is bad.
bool load_scenarios(const std::vector<std::string>& paths, std::vector<LoadedScenario>& out);

}  // namespace lockstep::cli
