// ExternalControl is the live world's WorldControl when the clients are external
// programs: a user's own client, started once per client (ClientProcess), reporting what
// it does on stdout. It is live::Control for everything but the clients, which it plays
// on the programs themselves, so a scenario's fault plan runs on them unchanged:
//
//   pause       SIGSTOP of the program's process group, SIGCONT when it ends
//   crash       SIGKILL of the group; restart runs the command again (its incarnation + 1)
//   clock-jump  the program's wall clock, through the preloaded clock library
//   clock-drift both of its clocks, through the same library
//   network     the fault proxy, as for every client
//
// Events: `sends` and `receives` are what the fault proxy sees on the client's links;
// when a fault is due at that instant the proxy holds the message until the fault has
// been played — dropped if it crashed the client, held while a pause lasts — so it lands
// before the command reaches the server (or the reply the program). Before a command
// moves on, whatever the program wrote to stdout is read, so an operation it announced
// is always recorded before the command it announced reaches the server.
//
// Files (clock files, each program's stderr) live in one private temporary directory,
// removed with the control. Everything runs on the world's loop thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/live/client_process.h"
#include "lockstep/live/control.h"

namespace lockstep::live {

struct ExternalClientSpec {
  std::vector<std::string> argv;
  std::string directory;          // where the program runs
  std::vector<std::string> env;   // "KEY=VALUE" for this client (LOCKSTEP_INCARNATION is added)
  bool shifted_clock = false;     // preload the clock library (a clock fault or offset needs it)
  Nanos clock_offset{0};
  double drift_ppm = 0;
};

// What the live world can do when its clients are this command: live_capabilities, less
// following a failover, and client clocks only where the clock library reaches them.
Capabilities external_capabilities(bool own_servers, const std::vector<std::string>& argv,
                                   const std::string& directory);

class ExternalControl : public Control {
 public:
  // Takes over the proxy's arrival hook.
  ExternalControl(LiveWorld& world, Cluster& cluster, const std::vector<std::string>& argv,
                  const std::string& directory);
  ~ExternalControl() override;

  // "" when the control could create its temporary directory.
  const std::string& error() const { return error_; }
  const std::string& dir() const { return dir_; }

  // Registers a client (before the fault plan looks processes up); does not start it.
  void add_client(const std::string& name, int64_t history_id, ExternalClientSpec spec);
  // Starts the client's program; "" or why it could not.
  std::string start(const std::string& name);
  // True once no program runs or is paused (each exited, or crashed).
  bool all_ended() const;
  // True once every client has been started and none runs, is paused, or lies crashed
  // waiting for a restart (`restarts`: whether a crashed client's fault restarts it).
  bool all_exited_for_good(const std::function<bool(const std::string& client)>& restarts) const;
  // Kills every program still running (the run is over); returns their names.
  std::vector<std::string> kill_running();
  // The end of the named client's stderr, for reports.
  std::string stderr_tail(const std::string& name, size_t lines) const;

  // What the programs say, by history id: each line, and an exit of their own.
  std::function<void(int64_t client, int incarnation, std::string_view line, bool overlong)> on_line;
  std::function<void(int64_t client, int incarnation, int wait_status)> on_exit;
  // A restart after a crash could not start the program again.
  std::function<void(int64_t client, int incarnation, const std::string& why)> on_start_failed;

  const Capabilities& capabilities() const override { return caps_; }
  void pause(const ProcessRef& p, Nanos d) override;
  void crash(const ProcessRef& p) override;
  void restart(const ProcessRef& p) override;
  void jump_wall_clock(const ProcessRef& p, Nanos by) override;
  void set_clock_drift(const ProcessRef& p, double drift_ppm) override;

 private:
  struct Client {
    std::string name;
    int64_t history_id = 0;
    ExternalClientSpec spec;
    int incarnation = 0;
    std::unique_ptr<ClientProcess> process;
    std::unique_ptr<ClockFile> clock;
    bool crashed = false;
    bool ended = false;  // exited by itself
    Nanos paused_until{0};
    std::vector<std::function<void()>> when_running;  // waiting for a pause to end
  };

  Client* find(std::string_view name);
  Client* find(const ProcessRef& p);
  bool arrived(const ProxyMessage& m);
  void end_pause(Client& c);
  void run_when_running(Client& c, std::function<void()> fn);

  Capabilities caps_;
  std::string dir_;
  std::string error_;
  std::map<std::string, std::unique_ptr<Client>, std::less<>> clients_;
};

}  // namespace lockstep::live
