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

TEST(SimShell, SetsAppendRenameAndTheOtherCommandsLockLibrariesSend) {
  EXPECT_EQ(sim_shell("SADD s 3 1 2\nSMEMBERS s\nSISMEMBER s 2\nAPPEND a hi\nAPPEND a !\nGETSET a x\n"
                      "INCRBYFLOAT f 1.5\nMEMORY USAGE a\nRENAME a b\nTYPE s\nZADD z 1 m 5 n\n"
                      "ZREMRANGEBYSCORE z -inf 2\nHSET h f v\nHKEYS h\nHVALS h\nSETEX e 10 v\nTTL e\n"
                      "SMISMEMBER s 1 9\nSADD b x\nTIME x\n"),
            "(integer) 3\n1) \"1\"\n2) \"2\"\n3) \"3\"\n(integer) 1\n(integer) 2\n(integer) 3\n\"hi!\"\n"
            "\"1.5\"\n(integer) 64\nOK\nset\n(integer) 2\n(integer) 1\n(integer) 1\n1) \"f\"\n1) \"v\"\nOK\n"
            "(integer) 10\n1) (integer) 1\n2) (integer) 0\n"
            "(error) WRONGTYPE Operation against a key holding the wrong kind of value\n"
            "(error) ERR wrong number of arguments for 'time' command\n");
}

TEST(SimShell, QuotingAsRedisCli) {
  EXPECT_EQ(sim_shell("SET k \"a\\x41\\n\"\nGET k\nSET q 'it\\'s'\nGET q\nSET \"unterminated\n"),
            "OK\n\"aA\\n\"\nOK\n\"it's\"\nInvalid argument(s)\n");
}

}  // namespace
