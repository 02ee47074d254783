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

// Symmetric transfer resumes the awaiter as a tail call. AddressSanitizer builds keep
// frames for every call, so there the chain is kept short enough to fit the stack.
#if defined(__SANITIZE_ADDRESS__)
constexpr int kDepth = 2000;
#else
constexpr int kDepth = 100000;
#endif

TEST(Task, LongAwaitChainsDoNotGrowTheStack) {
  Task<int> t = deep(kDepth);
  t.handle().resume();
  ASSERT_TRUE(t.done());
  EXPECT_EQ(t.result(), kDepth);
}

}  // namespace
}  // namespace lockstep
