// The `lockstep` command line as a function, so that a program which registers its own
// lock (lockstep/algorithms.h) is a complete lockstep for that lock:
//
//   int main(int argc, char** argv) {
//     lockstep::register_algorithm({"my-lock", make_my_lock});
//     return lockstep::cli_main(argc, argv);
//   }
//
// Then `my-lockstep run my-lock-pause.json`, `my-lockstep fuzz --algorithm my-lock` and
// `my-lockstep matrix --algorithms my-lock` treat it like a built-in algorithm, and the
// replay commands in its reports name this program (argv[0]'s file name).
#pragma once

namespace lockstep {

// Parses argv and runs the subcommand; returns the process exit code (0 success, 1 a
// verdict other than expected, 2 unknown, 64 usage, 65 bad data).
int cli_main(int argc, char** argv);

// The version of this lockstep, e.g. "0.1.0".
const char* version();

}  // namespace lockstep
