// Runs a command line through the shell and keeps what it wrote to standard output and how
// it ended: the tests that drive lockstep's command line, or another tool, as a user would.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>
#include <vector>

namespace lockstep::test_shell {

struct Result {
  int status = -1;  // as pclose() returns it
  int code = -1;    // the exit code, or -1 when it did not exit normally
  std::string out;
};

inline Result run(const std::string& cmd) {
  Result r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf{};
  for (size_t n; (n = std::fread(buf.data(), 1, buf.size(), p)) > 0;) r.out.append(buf.data(), n);
  r.status = pclose(p);
  r.code = WIFEXITED(r.status) ? WEXITSTATUS(r.status) : -1;
  return r;
}

// `out` split at its newlines (the text after the last newline is dropped).
inline std::vector<std::string> lines_of(const std::string& out) {
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t nl; (nl = out.find('\n', start)) != std::string::npos; start = nl + 1) lines.push_back(out.substr(start, nl - start));
  return lines;
}

}  // namespace lockstep::test_shell
