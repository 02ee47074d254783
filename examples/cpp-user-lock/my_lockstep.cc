// The lockstep command line with the team's locks registered: `my-lockstep run FILE`,
// `my-lockstep fuzz --algorithm lease-lock`, `my-lockstep matrix --algorithms lease-lock`,
// and the replay commands its reports print.
#include <lockstep/cli.h>

#include "lease_lock.h"

int main(int argc, char** argv) {
  acme::register_lease_locks();
  return lockstep::cli_main(argc, argv);
}
