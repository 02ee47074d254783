// A real browser a test can click in: headless Chromium driven through its DevTools
// protocol over two pipes (--remote-debugging-pipe: commands on the browser's fd 3,
// replies and events on its fd 4, each message JSON ended by a NUL byte). No port, no
// WebDriver, nothing but Chromium itself. Input goes in as real mouse, wheel and key
// events (Input.dispatch*), which the page's handlers see as a person's; the test then
// reads the DOM back with Runtime.evaluate.
//
// Nothing here waits a fixed time: every call waits for its reply (or the event it
// needs), with a generous bound that only turns a hung browser into a failure.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <deque>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_shell.h"

namespace lockstep::test_browser {

using json = nlohmann::json;

// Debian's chromium (scripts/setup installs it), or "" when there is none.
inline std::string chromium_path() {
  for (const char* name : {"chromium", "chromium-browser"}) {
    test_shell::Result r = test_shell::run(std::string("command -v ") + name + " 2>/dev/null");
    if (r.status == 0 && !r.out.empty()) return r.out.substr(0, r.out.find('\n'));
  }
  return "";
}

class CdpBrowser {
 public:
  CdpBrowser() = default;
  CdpBrowser(const CdpBrowser&) = delete;
  CdpBrowser& operator=(const CdpBrowser&) = delete;
  ~CdpBrowser() { stop(); }

  // Starts the browser with a page `width` x `height` CSS pixels; false with `error` when
  // it cannot.
  bool start(const std::string& chromium, const std::filesystem::path& profile, int width, int height,
             std::string& error) {
    int to[2], from[2];
    if (pipe(to) != 0 || pipe(from) != 0) return fail(error, "pipe failed");
    pid_ = fork();
    if (pid_ < 0) return fail(error, "fork failed");
    if (pid_ == 0) {
      // The browser's ends go to fd 3 and 4 by way of high numbers, so neither dup2
      // overwrites the other's source.
      int in = fcntl(to[0], F_DUPFD, 10), out = fcntl(from[1], F_DUPFD, 10);
      dup2(in, 3);
      dup2(out, 4);
      int null = ::open("/dev/null", O_RDWR);
      dup2(null, 0);
      dup2(null, 1);
      dup2(null, 2);
      for (int fd = 5; fd < 1024; ++fd) close(fd);
      const std::string dir = "--user-data-dir=" + profile.string();
      const std::string size = "--window-size=" + std::to_string(width) + "," + std::to_string(height);
      const char* argv[] = {chromium.c_str(), "--headless", "--no-sandbox", "--disable-gpu",
                            "--remote-debugging-pipe", "--no-first-run", "--disable-background-networking",
                            "--disable-component-update", "--disable-sync", "--hide-scrollbars",
                            "--disable-extensions", dir.c_str(), size.c_str(), "about:blank", nullptr};
      execv(chromium.c_str(), const_cast<char* const*>(argv));
      _exit(127);
    }
    close(to[0]);
    close(from[1]);
    out_ = to[1];
    in_ = from[0];
    fcntl(out_, F_SETFD, FD_CLOEXEC);
    fcntl(in_, F_SETFD, FD_CLOEXEC);
    signal(SIGPIPE, SIG_IGN);
    json targets = call("Target.getTargets", json::object(), false);
    std::string target;
    for (const auto& t : targets.value("targetInfos", json::array())) {
      if (t.value("type", "") == "page") target = t.value("targetId", "");
    }
    if (target.empty()) target = call("Target.createTarget", {{"url", "about:blank"}}, false).value("targetId", "");
    if (target.empty()) return fail(error, "no page target: " + last_error_);
    session_ = call("Target.attachToTarget", {{"targetId", target}, {"flatten", true}}, false).value("sessionId", "");
    if (session_.empty()) return fail(error, "cannot attach to the page: " + last_error_);
    call("Page.enable");
    call("Runtime.enable");
    call("Emulation.setDeviceMetricsOverride",
         {{"width", width}, {"height", height}, {"deviceScaleFactor", 1}, {"mobile", false}});
    if (!last_error_.empty()) return fail(error, last_error_);
    return true;
  }

  // Loads `url` and returns once its load event fired.
  bool open(const std::string& url) {
    events_.clear();
    call("Page.navigate", {{"url", url}});
    return wait_event("Page.loadEventFired");
  }

  // The value of a JavaScript expression (JSON-serialisable), or null with last_error().
  json eval(const std::string& expression) {
    json r = call("Runtime.evaluate", {{"expression", expression}, {"returnByValue", true}, {"awaitPromise", true}});
    if (r.contains("exceptionDetails")) {
      last_error_ = r["exceptionDetails"].dump();
      return nullptr;
    }
    return r.contains("result") ? r["result"].value("value", json()) : json();
  }

  void click(double x, double y, int clicks = 1) {
    mouse("mouseMoved", x, y, 0);
    for (int i = 1; i <= clicks; ++i) {
      mouse("mousePressed", x, y, i);
      mouse("mouseReleased", x, y, i);
    }
  }

  void drag(double x0, double y0, double x1, double y1, int steps = 8) {
    mouse("mouseMoved", x0, y0, 0);
    mouse("mousePressed", x0, y0, 1);
    for (int i = 1; i <= steps; ++i) {
      mouse("mouseMoved", x0 + (x1 - x0) * i / steps, y0 + (y1 - y0) * i / steps, 0, 1);
    }
    mouse("mouseReleased", x1, y1, 1);
  }

  // A wheel turn; modifiers as the protocol counts them (2 = Ctrl, 8 = Shift).
  void wheel(double x, double y, double dy, int modifiers = 0) {
    call("Input.dispatchMouseEvent",
         {{"type", "mouseWheel"}, {"x", x}, {"y", y}, {"deltaX", 0}, {"deltaY", dy}, {"modifiers", modifiers}});
  }

  // A key press: `key` as KeyboardEvent.key says it ("+", "n", "ArrowRight").
  void key(const std::string& key) {
    json down = {{"type", "keyDown"}, {"key", key}};
    if (key.size() == 1) down["text"] = key;
    static const std::pair<const char*, int> kCodes[] = {{"ArrowLeft", 37}, {"ArrowRight", 39}, {"Home", 36}, {"Backspace", 8}};
    for (const auto& [name, code] : kCodes) {
      if (key == name) down["windowsVirtualKeyCode"] = code;
    }
    call("Input.dispatchKeyEvent", down);
    call("Input.dispatchKeyEvent", {{"type", "keyUp"}, {"key", key}});
  }

  // What the page wrote to its console and every uncaught exception, as text.
  std::vector<std::string> console() {
    drain();
    return console_;
  }
  const std::string& last_error() const { return last_error_; }

  void stop() {
    if (pid_ <= 0) return;
    if (out_ >= 0 && in_ >= 0) call("Browser.close", json::object(), false, 10);
    if (out_ >= 0) close(out_);
    if (in_ >= 0) close(in_);
    out_ = in_ = -1;
    for (int i = 0; i < 100; ++i) {
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        return;
      }
      usleep(50'000);
    }
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

  // A protocol call; the page's session unless `page` is false. Returns the result, or
  // an empty object with last_error() set.
  json call(const std::string& method, json params = json::object(), bool page = true, int timeout_s = 120) {
    if (out_ < 0) return json::object();
    const int id = ++next_id_;
    json msg = {{"id", id}, {"method", method}, {"params", std::move(params)}};
    if (page && !session_.empty()) msg["sessionId"] = session_;
    std::string bytes = msg.dump();
    bytes.push_back('\0');
    for (size_t done = 0; done < bytes.size();) {
      const ssize_t n = write(out_, bytes.data() + done, bytes.size() - done);
      if (n <= 0) {
        last_error_ = method + ": the browser went away";
        return json::object();
      }
      done += static_cast<size_t>(n);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
    while (true) {
      json m;
      if (!next_message(m, deadline)) {
        last_error_ = method + ": no reply from the browser";
        return json::object();
      }
      if (m.value("id", -1) != id) {
        event(std::move(m));
        continue;
      }
      if (m.contains("error")) {
        last_error_ = method + ": " + m["error"].dump();
        return json::object();
      }
      return m.value("result", json::object());
    }
  }

 private:
  static bool fail(std::string& error, const std::string& why) {
    error = why;
    return false;
  }

  void mouse(const char* type, double x, double y, int clicks, int buttons = -1) {
    json p = {{"type", type}, {"x", x}, {"y", y}};
    if (std::strcmp(type, "mouseMoved") != 0) {
      p["button"] = "left";
      p["clickCount"] = clicks;
    } else if (buttons > 0) {
      p["button"] = "left";
      p["buttons"] = buttons;
    }
    call("Input.dispatchMouseEvent", p);
  }

  bool wait_event(const std::string& method) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (true) {
      for (auto it = events_.begin(); it != events_.end(); ++it) {
        if (it->value("method", "") == method) {
          events_.erase(it);
          return true;
        }
      }
      json m;
      if (!next_message(m, deadline)) return false;
      event(std::move(m));
    }
  }

  void event(json m) {
    const std::string method = m.value("method", "");
    if (method == "Runtime.consoleAPICalled") {
      std::string text = m["params"].value("type", "log") + ":";
      for (const auto& a : m["params"].value("args", json::array())) text += " " + a.value("value", a).dump();
      console_.push_back(text);
    } else if (method == "Runtime.exceptionThrown") {
      console_.push_back("exception: " + m["params"]["exceptionDetails"].dump());
    }
    events_.push_back(std::move(m));
    if (events_.size() > 1000) events_.pop_front();
  }

  void drain() {
    json m;
    while (next_message(m, std::chrono::steady_clock::now())) event(std::move(m));
  }

  bool next_message(json& out, std::chrono::steady_clock::time_point deadline) {
    while (true) {
      if (auto nul = buffer_.find('\0'); nul != std::string::npos) {
        out = json::parse(buffer_.substr(0, nul), nullptr, false);
        buffer_.erase(0, nul + 1);
        return true;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      pollfd p{in_, POLLIN, 0};
      if (in_ < 0 || poll(&p, 1, static_cast<int>(std::max<int64_t>(left.count(), 0))) <= 0) return false;
      char chunk[65536];
      const ssize_t n = read(in_, chunk, sizeof chunk);
      if (n <= 0) return false;
      buffer_.append(chunk, static_cast<size_t>(n));
    }
  }

  pid_t pid_ = -1;
  int out_ = -1, in_ = -1;
  int next_id_ = 0;
  std::string session_;
  std::string buffer_;
  std::string last_error_;
  std::deque<json> events_;
  std::vector<std::string> console_;
};

}  // namespace lockstep::test_browser
