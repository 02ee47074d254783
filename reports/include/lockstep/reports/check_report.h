// The page `lockstep check --html` writes for one history, whatever format it came in:
// every operation as a box from its call to its return, one lane per process (the history's
// own times, or its order when it recorded none), and the verdict. For an invalid history
// it shows what Porcupine shows: the longest partial linearization the search found, each
// operation numbered in the order it was placed with the model's state after it, and the
// operation that could not be placed, in red with the sentence that says why. A history of
// several keys is drawn for the key that failed.
#pragma once

#include <string>

#include "lockstep/checker/history.h"
#include "lockstep/checker/linearizability.h"

namespace lockstep::reports {

struct CheckPageInput {
  std::string file;   // the history's file, as the user named it
  std::string model;  // the model it was checked against
  const checker::History* history = nullptr;
  const checker::LinResult* result = nullptr;
};

// One self-contained page (no external resources), the same bytes for the same input.
std::string render_check_html(const CheckPageInput& in);

}  // namespace lockstep::reports
