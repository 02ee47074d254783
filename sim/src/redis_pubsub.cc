// Pub/Sub: SUBSCRIBE, UNSUBSCRIBE and PUBLISH. Delivery is the caller's business: the
// node hands each message to the publisher callback, once per subscribed connection, in
// the order the connections subscribed.
//
// One simulator-specific shape: a Reply is a single value, so SUBSCRIBE/UNSUBSCRIBE of
// several channels answer with an Array of the per-channel confirmation arrays (a real
// server sends them as consecutive replies). UNSUBSCRIBE without arguments leaves the
// channels in sorted order (a real server uses its hash table order).
#include <algorithm>

#include "redis_impl.h"

namespace lockstep::sim {

namespace {

using Impl = NodeCore;

Reply confirmation(const char* kind, std::optional<std::string> channel, size_t count) {
  return Reply::array({Reply::bulk(kind), channel ? Reply::bulk(*channel) : Reply::nil(),
                       Reply::integer_of(static_cast<int64_t>(count))});
}

Reply one_or_many(std::vector<Reply> replies) {
  if (replies.size() == 1) return std::move(replies.front());
  return Reply::array(std::move(replies));
}

Reply cmd_subscribe(Impl& m, ClientState& c, const Args& a) {
  std::vector<Reply> out;
  for (size_t i = 1; i < a.size(); ++i) {
    if (c.channels.insert(a[i]).second) m.subscribers[a[i]].push_back(&c);
    out.push_back(confirmation("subscribe", a[i], c.channels.size()));
  }
  return one_or_many(std::move(out));
}

void forget(Impl& m, ClientState& c, const std::string& channel) {
  auto it = m.subscribers.find(channel);
  if (it == m.subscribers.end()) return;
  auto& v = it->second;
  v.erase(std::remove(v.begin(), v.end(), &c), v.end());
  if (v.empty()) m.subscribers.erase(it);
}

Reply cmd_unsubscribe(Impl& m, ClientState& c, const Args& a) {
  Args channels(a.begin() + 1, a.end());
  if (channels.empty()) {
    if (c.channels.empty()) return confirmation("unsubscribe", std::nullopt, 0);
    channels.assign(c.channels.begin(), c.channels.end());
  }
  std::vector<Reply> out;
  for (const auto& ch : channels) {
    if (c.channels.erase(ch)) forget(m, c, ch);
    out.push_back(confirmation("unsubscribe", ch, c.channels.size()));
  }
  return one_or_many(std::move(out));
}

// Redis sends PUBLISH down the replication stream too, so a replica's own subscribers
// get the message.
Reply cmd_publish(Impl& m, ClientState&, const Args& a) {
  m.propagate(a);
  auto it = m.subscribers.find(a[1]);
  if (it == m.subscribers.end()) return Reply::integer_of(0);
  const auto receivers = it->second;  // a callback may disconnect someone
  for (ClientState* target : receivers)
    if (m.publisher) m.publisher(*target, a[1], a[2]);
  return Reply::integer_of(static_cast<int64_t>(receivers.size()));
}

}  // namespace

void register_pubsub_commands(std::vector<Command>& out) {
  out.insert(out.end(), {
                            {"subscribe", -2, kNoScript | kPubSubOk, cmd_subscribe},
                            {"unsubscribe", -1, kNoScript | kPubSubOk, cmd_unsubscribe},
                            {"publish", 3, kMayReplicate, cmd_publish},
                        });
}

}  // namespace lockstep::sim
