#include "lockstep/live/sentinel_follower.h"

#include <hiredis/adapters/libevent.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>

#include <cstdlib>
#include <sstream>
#include <utility>

#include "child_processes.h"

namespace lockstep::live {

// Apart from the follower so that work it deferred finds out, through a weak pointer,
// that the follower has gone.
struct SentinelFollower::State {
  struct Link {
    State* state = nullptr;
    redisAsyncContext* ctx = nullptr;
    bool confirmed = false;
  };

  LiveWorld& world;
  std::vector<std::string> names;
  std::vector<std::unique_ptr<Link>> links;
  std::function<void(int, const NodeAddress&, const NodeAddress&)>* on_switch = nullptr;
  std::weak_ptr<State> self;
  bool closing = false;

  State(LiveWorld& w, std::vector<std::string> n) : world(w), names(std::move(n)) {}

  ~State() {
    closing = true;
    for (auto& l : links) {
      // Calls on_message with a null reply for the pending SUBSCRIBE: closing is set.
      if (l->ctx) redisAsyncFree(std::exchange(l->ctx, nullptr));
    }
  }

  static void on_connect(const redisAsyncContext* ac, int status) {
    // A failed connect is freed by hiredis without a disconnect callback.
    if (status != REDIS_OK) on_disconnect(ac, status);
  }

  static void on_disconnect(const redisAsyncContext* ac, int) {
    if (auto* l = static_cast<Link*>(ac->data)) l->ctx = nullptr;  // hiredis frees it
  }

  static void on_message(redisAsyncContext* ac, void* r, void*) {
    auto* l = static_cast<Link*>(ac->data);
    if (!r || !l || l->state->closing) return;
    const Reply reply = reply_from_hiredis(r);
    if (reply.type != Reply::Type::Array || reply.elements.size() < 3) return;
    const std::string& kind = reply.elements[0].str;
    if (kind == "subscribe") {
      l->confirmed = true;
    } else if (kind == "message" && reply.elements[1].str == "+switch-master") {
      l->state->announced(reply.elements[2].str);
    }
  }

  // "<master name> <old ip> <old port> <new ip> <new port>"
  void announced(const std::string& payload) {
    std::istringstream in(payload);
    std::string name, old_host, old_port, new_host, new_port;
    if (!(in >> name >> old_host >> old_port >> new_host >> new_port)) return;
    int node = -1;
    for (size_t i = 0; i < names.size(); ++i) {
      if (names[i] == name) node = static_cast<int>(i);
    }
    NodeAddress to;
    if (node < 0 || !parse_address(new_host + ":" + new_port, to)) return;
    world.loop().defer([weak = self, node, to] {
      auto st = weak.lock();
      if (!st || st->closing) return;
      const NodeAddress from = st->world.node_address(node);
      if (from.host == to.host && from.port == to.port) return;  // another sentinel said it first
      st->world.set_node_address(node, to);
      if (st->on_switch && *st->on_switch) (*st->on_switch)(node, from, to);
    });
  }
};

SentinelFollower::SentinelFollower(LiveWorld& world, std::vector<std::string> master_names)
    : state_(std::make_shared<State>(world, std::move(master_names))) {
  state_->self = state_;
  state_->on_switch = &on_switch;
}

SentinelFollower::~SentinelFollower() { state_.reset(); }

std::string SentinelFollower::follow(const std::vector<NodeAddress>& sentinels) {
  for (const auto& a : sentinels) {
    state_->links.push_back(std::make_unique<State::Link>());
    State::Link& link = *state_->links.back();
    link.state = state_.get();
    redisAsyncContext* ctx = redisAsyncConnect(a.host.c_str(), a.port);
    if (!ctx) return "cannot allocate a connection to sentinel " + a.text();
    if (ctx->err) {
      std::string why = ctx->errstr;
      redisAsyncFree(ctx);
      return "sentinel " + a.text() + ": " + why;
    }
    children::close_on_exec(ctx->c.fd);
    ctx->data = &link;
    link.ctx = ctx;
    redisLibeventAttach(ctx, state_->world.loop().base());
    redisAsyncSetConnectCallback(ctx, &State::on_connect);
    redisAsyncSetDisconnectCallback(ctx, &State::on_disconnect);
    if (redisAsyncCommand(ctx, &State::on_message, nullptr, "SUBSCRIBE +switch-master") != REDIS_OK)
      return "cannot subscribe to sentinel " + a.text();
  }
  return "";
}

bool SentinelFollower::subscribed() const {
  for (const auto& l : state_->links) {
    if (!l->confirmed || !l->ctx) return false;
  }
  return true;
}

}  // namespace lockstep::live
