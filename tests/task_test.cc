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

// A hand-opened gate: tasks wait on it until the test opens it, as they would wait on a
// reply that the world delivers later.
struct Gate {
  std::coroutine_handle<> waiter;
  int value = 0;
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<> h) noexcept { waiter = h; }
  int await_resume() const noexcept { return value; }
  void open(int v) {
    value = v;
    std::exchange(waiter, {}).resume();
  }
};

struct Alive {
  int& count;
  explicit Alive(int& c) : count(c) { ++count; }
  ~Alive() { --count; }
};

Task<int> through(Gate& g, int& alive) {
  Alive a(alive);
  co_return co_await g;
}

Task<std::vector<int>> gather(std::vector<Task<int>> tasks) { co_return co_await when_all(std::move(tasks)); }

TEST(WhenAll, CompletesWithTheLastTaskAndKeepsTheirOrder) {
  Gate g[3];
  int alive = 0;
  std::vector<Task<int>> tasks;
  for (auto& gate : g) tasks.push_back(through(gate, alive));
  Task<std::vector<int>> all = gather(std::move(tasks));
  all.handle().resume();
  EXPECT_EQ(alive, 3);  // all three started, each waiting at its gate
  g[2].open(30);
  g[0].open(10);
  EXPECT_FALSE(all.done());
  g[1].open(20);
  ASSERT_TRUE(all.done());
  EXPECT_EQ(all.result(), (std::vector<int>{10, 20, 30}));
  EXPECT_EQ(alive, 0);
}

TEST(WhenAll, FinishedTasksAndNoTasksCompleteAtOnce) {
  std::vector<Task<int>> ready;
  ready.push_back(answer());
  ready.push_back(twice());
  Task<std::vector<int>> all = gather(std::move(ready));
  all.handle().resume();
  ASSERT_TRUE(all.done());
  EXPECT_EQ(all.result(), (std::vector<int>{42, 84}));
  Task<std::vector<int>> none = gather({});
  none.handle().resume();
  ASSERT_TRUE(none.done());
  EXPECT_TRUE(none.result().empty());
}

// A crashed process destroys its frames: a when_all waiting on tasks takes them along.
TEST(WhenAll, DestroyingItDestroysTheTasksItRuns) {
  Gate g[2];
  int alive = 0;
  {
    std::vector<Task<int>> tasks;
    for (auto& gate : g) tasks.push_back(through(gate, alive));
    Task<std::vector<int>> all = gather(std::move(tasks));
    all.handle().resume();
    g[0].open(1);
    EXPECT_EQ(alive, 1);
  }
  EXPECT_EQ(alive, 0);
}

}  // namespace
}  // namespace lockstep
