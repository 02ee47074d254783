#include "lockstep/cli.h"

int main(int argc, char** argv) { return lockstep::cli_main(argc, argv); }
