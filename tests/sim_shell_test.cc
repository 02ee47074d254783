// lockstep sim-shell, driven through the built binary as a user would.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "test_shell.h"

namespace {

std::string sim_shell(const std::string& input, const std::string& flags = "") {
  // One file per test: ctest -j runs these tests as concurrent processes.
  const std::string path = ::testing::TempDir() + "sim_shell_input_" +
                           ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".txt";
  std::ofstream(path) << input;
  std::string cmd = std::string(LOCKSTEP_BINARY) + " sim-shell " + flags + " < " + path;
  auto r = lockstep::test_shell::run(cmd);
  EXPECT_EQ(r.status, 0);
  return r.out;
}

TEST(SimShell, PrintsRepliesLikeRedisCli) {
  EXPECT_EQ(sim_shell("SET k v\nGET k\nINCR n\nGET missing\nRPUSH l a \"b c\"\nLRANGE l 0 -1\nFOO\n"),
            "OK\n\"v\"\n(integer) 1\n(nil)\n(integer) 2\n1) \"a\"\n2) \"b c\"\n"
            "(error) ERR unknown command 'FOO', with args beginning with: \n");
}

TEST(SimShell, RespModePrintsWireBytes) {
  EXPECT_EQ(sim_shell("SET k v\nGET k\nGET nope\n", "--resp"), "+OK\r\n$1\r\nv\r\n$-1\r\n");
}

TEST(SimShell, SleepLetsKeysExpireAndJumpStepsTheClock) {
  EXPECT_EQ(sim_shell("SET a 1 PX 100\n.sleep 50\nEXISTS a\n.sleep 60\nEXISTS a\nSET b 1 EX 10\n.jump 20000\nGET b\n"),
            "OK\n(integer) 1\n(integer) 0\nOK\n(nil)\n");
}

TEST(SimShell, QuotingAsRedisCli) {
  EXPECT_EQ(sim_shell("SET k \"a\\x41\\n\"\nGET k\nSET q 'it\\'s'\nGET q\nSET \"unterminated\n"),
            "OK\n\"aA\\n\"\nOK\n\"it's\"\nInvalid argument(s)\n");
}

}  // namespace
