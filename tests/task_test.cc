#include "lockstep/task.h"

#include <gtest/gtest.h>

namespace lockstep {
namespace {

Task<int> answer() { co_return 42; }
Task<int> twice() {
  int a = co_await answer();
  int b = co_await answer();
  co_return a + b;
}

TEST(Task, IsLazyUntilStarted) {
  Task<int> t = twice();
  EXPECT_FALSE(t.done());
  t.handle().resume();
  ASSERT_TRUE(t.done());
  EXPECT_EQ(t.result(), 84);
}

Task<int> deep(int n) {
  if (n == 0) co_return 0;
  co_return 1 + co_await deep(n - 1);
}

TEST(Task, LongAwaitChainsDoNotGrowTheStack) {
  Task<int> t = deep(100000);
  t.handle().resume();
  ASSERT_TRUE(t.done());
  EXPECT_EQ(t.result(), 100000);
}

}  // namespace
}  // namespace lockstep
