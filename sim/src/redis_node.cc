// RedisNode: command dispatch (the checks of Redis's processCommand, in its order), the
// keyspace with lazy and active expiry, and the bookkeeping every change goes through:
// observer events, WATCH versions and the replication stream.
#include "lockstep/sim/redis_node.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <string_view>
#include <utility>

#include "lua_bridge.h"
#include "redis_impl.h"
#include "redis_scripting.h"

namespace lockstep::sim {

namespace {

std::string map_crlf_to_spaces(std::string s) {
  std::replace(s.begin(), s.end(), '\r', ' ');
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

// rejectCommandFormat: at most ~128 bytes of arguments, each quoted and followed by a
// space (so the message ends with a space), and no CR/LF reaching the wire.
Reply unknown_command(const Args& argv) {
  std::string args;
  for (size_t i = 1; i < argv.size() && args.size() < 128; ++i) {
    args += "'" + argv[i].substr(0, 128 - args.size()) + "' ";
  }
  return Reply::error(map_crlf_to_spaces("ERR unknown command '" + argv[0].substr(0, 128) +
                                         "', with args beginning with: " + args));
}

}  // namespace

bool arity_ok(const Command& cmd, size_t argc) {
  const auto n = static_cast<int64_t>(argc);
  return cmd.arity >= 0 ? n == cmd.arity : n >= -cmd.arity;
}

namespace {
const std::vector<Command>& command_list() {
  static const std::vector<Command> list = [] {
    std::vector<Command> out;
    register_key_commands(out);
    register_string_commands(out);
    register_hash_commands(out);
    register_list_commands(out);
    register_zset_commands(out);
    register_set_commands(out);
    register_script_commands(out);
    register_multi_commands(out);
    register_pubsub_commands(out);
    register_server_commands(out);
    register_cluster_commands(out);
    return out;
  }();
  return list;
}

const NodeCore::CommandTable& command_table() {
  static const NodeCore::CommandTable table = [] {
    NodeCore::CommandTable t;
    for (const auto& c : command_list()) t[c.name] = &c;
    return t;
  }();
  return table;
}
}  // namespace

NodeCore::NodeCore()
    : commands(command_table()),
      lua(std::make_unique<LuaEngine>(*this)),
      command_base(command_list().data()),
      histogram_made(command_list().size()) {}

NodeCore::~NodeCore() = default;

namespace {
// Every command name (with "container|sub") is shorter; a longer one names nothing.
constexpr size_t kNameMax = 32;

// Appends `s` lowercased (ASCII, as the C locale's tolower) to buf at n; false when it
// would not fit.
bool append_lower(char* buf, size_t& n, std::string_view s) {
  if (s.size() > kNameMax - n) return false;
  for (char c : s) buf[n++] = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  return true;
}
}  // namespace

// Every command goes through here: no allocation, one hash of a short name.
const Command* NodeCore::find(const std::string& name) const {
  FoundName* slot = nullptr;
  if (!name.empty() && name.size() < sizeof(FoundName::name)) {
    slot = &found_names[(name.size() * 7 + static_cast<unsigned char>(name[0])) & 15];
    if (slot->size == name.size() && std::memcmp(slot->name, name.data(), name.size()) == 0) return slot->cmd;
  }
  char buf[kNameMax];
  size_t n = 0;
  if (!append_lower(buf, n, name)) return nullptr;
  auto it = commands.find(std::string_view(buf, n));
  const Command* cmd = it == commands.end() ? nullptr : it->second;
  if (slot && cmd) {
    std::memcpy(slot->name, name.data(), name.size());
    slot->size = name.size();
    slot->cmd = cmd;
  }
  return cmd;
}

unsigned NodeCore::flags_of(const Command& cmd, const Args& argv) const {
  if (!(cmd.flags & kRunsScript)) return cmd.flags;
  const unsigned script = lua->declared_flags(argv, std::string_view(cmd.name) == "evalsha");
  if (script & kScriptCompat) return cmd.flags;
  // scriptFlagsToCmdFlags: a script with a shebang writes unless it says no-writes, and
  // is refused under OOM unless it says allow-oom (no-writes implies it).
  unsigned flags = cmd.flags & ~(kWrite | kDenyOom);
  if (!(script & (kScriptAllowOom | kScriptNoWrites))) flags |= kDenyOom;
  if (!(script & kScriptNoWrites)) flags |= kWrite;
  return flags;
}

const Command* NodeCore::find_sub(const Command& container,
                                         const std::string& sub) const {
  char buf[kNameMax];
  size_t n = 0;
  if (!append_lower(buf, n, container.name) || !append_lower(buf, n, "|") || !append_lower(buf, n, sub))
    return nullptr;
  auto it = commands.find(std::string_view(buf, n));
  return it == commands.end() ? nullptr : it->second;
}

Reply NodeCore::process(ClientState& c, const Args& argv) {
  if (argv.empty()) return Reply::error("ERR empty command");
  const Command* cmd = find(argv[0]);
  // Errors found before a command is queued poison the whole transaction; a rejected
  // EXEC discards it at once, quoting the reason (execCommandAbort).
  auto reject = [&](Reply r) {
    if (c.in_multi) c.multi_dirty = true;
    if (cmd && std::string_view(cmd->name) == "exec") {
      discard_transaction(c);
      std::string why = r.str.rfind("ERR ", 0) == 0 ? r.str.substr(4) : r.str;
      return Reply::error("EXECABORT Transaction discarded because of: " + why);
    }
    return r;
  };
  if (!cmd) return reject(unknown_command(argv));
  if ((cmd->flags & kContainer) && argv.size() >= 2) {
    const Command* sub = find_sub(*cmd, argv[1]);
    if (!sub) {
      std::string upper = cmd->name;
      for (auto& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      return reject(Reply::error(map_crlf_to_spaces("ERR unknown subcommand '" +
                                                    argv[1].substr(0, 128) + "'. Try " +
                                                    upper + " HELP.")));
    }
    cmd = sub;
  }
  if (!arity_ok(*cmd, argv.size())) return reject(err_arity(cmd->name));
  if (auto redirect = cluster_redirect(c, *cmd, argv)) {
    // A redirected EXEC drops the transaction but answers with the redirection itself.
    if (std::string_view(cmd->name) == "exec") discard_transaction(c);
    else if (c.in_multi) c.multi_dirty = true;
    return std::move(*redirect);
  }
  if (memory.maxmemory > 0 && !replica) {
    const bool oom = !perform_evictions();
    // Inside MULTI everything but EXEC and DISCARD is refused, since queueing itself takes
    // memory; EXEC is refused when it holds a command that may grow memory.
    const std::string_view name(cmd->name);
    bool deny = (flags_of(*cmd, argv) & kDenyOom) != 0;
    if (c.in_multi && name != "exec" && name != "discard") deny = true;
    if (c.in_multi && name == "exec") {
      for (const auto& q : c.queued) {
        const Command* qc = find(q[0]);
        if (qc && (qc->flags & kContainer) && q.size() > 1) qc = find_sub(*qc, q[1]);
        deny = deny || (qc && (flags_of(*qc, q) & kDenyOom));
      }
    }
    if (oom && deny) return reject(Reply::error(kOomError));
    // A script's first write that may grow memory is refused when the server was out of
    // memory as the script started (server.script_oom).
    script_oom = oom;
  }
  if (replica && !c.is_master_link && (flags_of(*cmd, argv) & kWrite))
    return reject(Reply::error("READONLY You can't write against a read only replica."));
  if (!c.channels.empty() && !(cmd->flags & kPubSubOk)) {
    return reject(Reply::error(std::string("ERR Can't execute '") + cmd->name +
                               "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / "
                               "RESET are allowed in this context"));
  }
  if (c.in_multi && !(cmd->flags & kNoQueue)) {
    c.queued.push_back(argv);
    return Reply::status("QUEUED");
  }
  return call(c, *cmd, argv);
}

Reply NodeCore::call(ClientState& c, const Command& cmd, const Args& argv) {
  ClientState* saved_client = client;
  auto saved_rewrite = std::move(rewritten);
  rewritten.reset();
  client = &c;
  ++call_depth;
  const int64_t before = dirty;
  Reply r = cmd.handler(*this, c, argv);
  // After the command, as call() records its latency: INFO does not see its own.
  if (uint8_t& made = histogram_made[static_cast<size_t>(&cmd - command_base)]; !made) {
    made = 1;
    ++histograms;
  }
  // An error is one protocol line: user text quoted in it gets CR/LF as spaces, as
  // addReplyErrorFormat does.
  if (r.is_error()) r.str = map_crlf_to_spaces(std::move(r.str));
  if ((cmd.flags & kWrite) && dirty > before) {
    if (rewritten) propagate(std::move(*rewritten));  // restored from saved_rewrite below
    else propagate(argv);
  }
  --call_depth;
  client = saved_client;
  rewritten = std::move(saved_rewrite);
  return r;
}

void NodeCore::propagate(Args&& argv) {
  if (!propagator) return;
  if (stream_contents) pending_propagation.push_back(std::move(argv));
  else ++pending_placeholders;
}

void NodeCore::propagate(const Args& argv) {
  if (!propagator) return;
  if (stream_contents) pending_propagation.push_back(argv);
  else ++pending_placeholders;
}

std::vector<const std::string*> NodeCore::sorted_keys() const {
  std::vector<const std::string*> keys;
  keys.reserve(db.size());
  for (const auto& kv : db) keys.push_back(&kv.first);
  std::sort(keys.begin(), keys.end(), [](const std::string* a, const std::string* b) { return *a < *b; });
  return keys;
}

// Effects of one top-level command reach replicas atomically: several are wrapped in
// MULTI/EXEC, as 7.0 does for scripts, transactions and expiries met on the way.
// (The propagator never runs a command on this node, so the buffers are simply swapped.)
void NodeCore::flush_propagation() {
  static const Args kMulti{"MULTI"}, kExec{"EXEC"}, kNone;
  // Contents are on or off for a whole command (they only change between commands), so
  // a command has either placeholders or effects with contents, never both.
  if (pending_placeholders > 0) {
    // The same count of calls the contents would have made.
    const size_t n = std::exchange(pending_placeholders, 0);
    const size_t calls = n > 1 ? n + 2 : n;
    if (placeholder_propagator) {
      placeholder_propagator(calls);
    } else if (propagator) {
      for (size_t i = 0; i < calls; ++i) propagator(kNone);
    }
  }
  if (pending_propagation.empty()) return;
  flushing.swap(pending_propagation);
  if (propagator) {
    const bool wrap = flushing.size() > 1;
    if (wrap) propagator(kMulti);
    for (const auto& op : flushing) propagator(op);
    if (wrap) propagator(kExec);
  }
  flushing.clear();
}

// Redis compares with '>': a key whose expiry time equals the clock is still alive
// (PTTL 0) and goes one millisecond later.
bool NodeCore::key_is_expired(const std::string&, const Entry& e) const {
  return e.expire >= 0 && now > e.expire;
}

bool NodeCore::expire_if_needed(const std::string& key) {
  auto it = db.find(key);
  return it != db.end() && expire_found(it);
}

// The expiry check of a key already found, so that a lookup hashes the key once.
bool NodeCore::expire_found(Keyspace::iterator it) {
  if (!key_is_expired(it->first, it->second)) return false;
  // A replica never expires keys on its own: its master sends the DEL, so both stay
  // consistent even with skewed clocks. Commands from the master must see the key as
  // the master did; everybody else gets the logically correct answer.
  if (replica) return !(client && client->is_master_link);
  remove_expired(it);
  return true;
}

void NodeCore::remove_expired(const std::string& key) { remove_expired(db.find(key)); }

void NodeCore::remove_expired(Keyspace::iterator it) {
  ++expired_keys;
  notify(KeyChange::Kind::Expire, it->first, it->second, -1);
  if (propagating()) propagate(Args{"DEL", it->first});
  else propagate(Args());
  const std::string key = versions_tracked ? it->first : std::string();
  erase_entry(it);
  if (versions_tracked) touch(key);
}

void NodeCore::erase_entry(Keyspace::iterator it) {
  if (spare.size() < kSpareMax) spare.push_back(db.extract(it));
  else db.erase(it);
}

Keyspace::iterator NodeCore::insert_key(const std::string& key) {
  if (spare.empty()) return db.try_emplace(key).first;
  Keyspace::node_type node = std::move(spare.back());
  spare.pop_back();
  node.key() = key;
  Entry& e = node.mapped();
  // Only a modest string buffer is worth keeping; anything else starts afresh.
  if (e.v.type != VType::String || e.v.str.capacity() > kSpareValueMax) e.v = Value();
  e.v.str.clear();
  e.expire = -1;
  e.writer = -1;
  return db.insert(std::move(node)).position;
}

Keyspace::iterator NodeCore::lookup_at(const std::string& key) {
  auto it = db.find(key);
  if (it == db.end() || expire_found(it)) return db.end();
  // Every lookup is an access for LRU/LFU (Redis's LOOKUP_NOTOUCH readers aside).
  touch_access(it->second, false);
  return it;
}

Entry* NodeCore::lookup_typed(const std::string& key, VType type, bool& wrong) {
  Entry* e = lookup(key);
  wrong = e && e->v.type != type;
  return wrong ? nullptr : e;
}

Entry& NodeCore::set_value(const std::string& key, Value v, bool keep_ttl) {
  bool inserted = false;
  auto it = emplace_key(key, inserted);
  it->second.v = std::move(v);
  return stored(it, inserted, keep_ttl);
}

// The string is copied into the entry's own buffer, which a re-created key brings along.
Entry& NodeCore::set_string_at(Keyspace::iterator at, const std::string& key, const std::string& value,
                               bool keep_ttl, int arg) {
  const bool inserted = at == db.end();
  auto it = inserted ? insert_key(key) : at;
  Value& v = it->second.v;
  if (v.type != VType::String) v = Value();
  v.str.assign(value);
  encode_string(v, arg);
  return stored(it, inserted, keep_ttl);
}

Entry& NodeCore::stored(Keyspace::iterator it, bool inserted, bool keep_ttl) {
  const std::string& key = it->first;
  if (!keep_ttl || inserted) it->second.expire = -1;
  // A new value starts a fresh LRU age; under LFU an overwrite keeps the old counter.
  if (inserted || !(memory.policy == EvictionPolicy::AllkeysLfu || memory.policy == EvictionPolicy::VolatileLfu))
    touch_access(it->second, inserted);
  it->second.writer = process_id();
  ++dirty;
  touch(key);
  notify(KeyChange::Kind::Set, key, it->second, process_id());
  return it->second;
}

void NodeCore::modified(const std::string& key, Entry& e) {
  ++dirty;
  const bool empty = (e.v.type == VType::Hash && e.v.hash.empty()) ||
                     (e.v.type == VType::List && e.v.list.empty()) ||
                     (e.v.type == VType::ZSet && e.v.zset.dict.empty()) ||
                     (e.v.type == VType::Set && e.v.set.members.empty());
  if (empty) {  // Redis never keeps an empty aggregate: the key goes away
    notify(KeyChange::Kind::Del, key, e, process_id());
    erase_entry(db.find(key));
    touch(key);
    return;
  }
  e.writer = process_id();
  touch(key);
  notify(KeyChange::Kind::Set, key, e, process_id());
}

bool NodeCore::remove(const std::string& key) {
  auto it = db.find(key);
  if (it == db.end() || expire_found(it)) return false;
  notify(KeyChange::Kind::Del, key, it->second, process_id());
  erase_entry(it);
  ++dirty;
  touch(key);
  return true;
}

void NodeCore::flush_db(int64_t by_process) {
  const std::vector<const std::string*> keys = sorted_keys();
  for (const std::string* key : keys) notify(KeyChange::Kind::Del, *key, db.at(*key), by_process);
  auto old = std::move(db);
  db.clear();
  for (const std::string* key : keys) touch(*key);
}

void NodeCore::touch(const std::string& key) {
  if (!versions_tracked) return;
  KeyVersion& v = versions[key];
  v.any = ++version_seq;
  if (db.count(key)) v.live = version_seq;
}

void NodeCore::notify(KeyChange::Kind kind, const std::string& key, const Entry& e,
                             int64_t by) {
  if (!observer || (observer_wanted && !observer_wanted())) return;
  change.kind = kind;
  change.key = key;
  if (e.v.type == VType::String) change.value = e.v.str;
  else change.value.clear();
  change.writer = e.writer;
  change.by_process = by;
  observer(change);
}

// ---------------------------------------------------------------------------------------

struct RedisNode::Impl : NodeCore {};

RedisNode::RedisNode() : impl_(std::make_unique<Impl>()) {}
RedisNode::~RedisNode() = default;

Reply RedisNode::execute(ClientState& client, const std::vector<std::string>& argv,
                         int64_t now_ms) {
  impl_->now = now_ms;
  Reply r = [&] {
    try {
      return impl_->process(client, argv);
    } catch (const std::exception& e) {
      return Reply::error(std::string("ERR internal error: ") + e.what());
    } catch (...) {
      return Reply::error("ERR internal error");
    }
  }();
  impl_->flush_propagation();
  if (r.is_error() && r.str.rfind("OOM ", 0) == 0) ++impl_->oom_errors;
  return r;
}

// Like activeExpireCycle: look at up to 20 keys with a TTL, delete the expired ones, and
// go on while more than a quarter of the sample had expired (a sign many more have),
// within a bounded number of rounds. The sample is a window of consecutive keys from a
// random start, as Redis scans consecutive hash buckets from a cursor.
void RedisNode::active_expire_cycle(int64_t now_ms, Rng& rng) {
  NodeCore& m = *impl_;
  if (m.replica) return;
  m.now = now_ms;
  m.client = nullptr;
  for (int round = 0; round < 16; ++round) {
    std::vector<std::string> volatile_keys;
    for (const std::string* k : m.sorted_keys())
      if (m.db.at(*k).expire >= 0) volatile_keys.push_back(*k);
    if (volatile_keys.empty()) break;
    const size_t n = volatile_keys.size();
    const size_t sample = std::min<size_t>(20, n);
    const size_t start = n <= 20 ? 0 : static_cast<size_t>(rng.between(0, int64_t(n) - 1));
    size_t expired = 0;
    for (size_t i = 0; i < sample; ++i) {
      const std::string& k = volatile_keys[(start + i) % n];
      if (m.key_is_expired(k, m.db.at(k))) {
        m.remove_expired(k);
        ++expired;
      }
    }
    m.flush_propagation();
    if (expired * 4 <= sample) break;
  }
}

void RedisNode::flush_all() {
  impl_->flush_db(-1);
  // A restarted server starts with empty statistics and pool; its configuration is its
  // command line, which the simulation keeps.
  impl_->evict_pool.clear();
  impl_->evicted_keys = 0;
  impl_->expired_keys = 0;
  impl_->oom_errors = 0;
  impl_->histograms = 0;
  impl_->histogram_made.assign(impl_->histogram_made.size(), 0);
  impl_->lua->restart();
}

void RedisNode::set_observer(std::function<void(const KeyChange&)> observer, std::function<bool()> wanted) {
  impl_->observer = std::move(observer);
  impl_->observer_wanted = std::move(wanted);
}

void RedisNode::set_publisher(std::function<void(ClientState&, const std::string&,
                                                 const std::string&)> publisher) {
  impl_->publisher = std::move(publisher);
}

void RedisNode::disconnect(ClientState& client) {
  for (auto it = impl_->subscribers.begin(); it != impl_->subscribers.end();) {
    auto& v = it->second;
    v.erase(std::remove(v.begin(), v.end(), &client), v.end());
    it = v.empty() ? impl_->subscribers.erase(it) : std::next(it);
  }
  client.channels.clear();
  client.watched.clear();
  client.watched_expired.clear();
  client.in_multi = false;
  client.multi_dirty = false;
  client.queued.clear();
}

void RedisNode::set_replica(bool replica) { impl_->replica = replica; }
void RedisNode::set_cluster(const ClusterLayout& layout, int self) {
  impl_->cluster = layout;
  impl_->cluster_self = self;
}
bool RedisNode::cluster_enabled() const { return impl_->cluster.has_value(); }
bool RedisNode::is_replica() const { return impl_->replica; }

void RedisNode::set_stream_contents(bool contents) { impl_->stream_contents = contents; }

void RedisNode::set_propagator(std::function<void(const std::vector<std::string>&)> p) {
  impl_->propagator = std::move(p);
}

void RedisNode::set_placeholder_propagator(std::function<void(size_t)> p) {
  impl_->placeholder_propagator = std::move(p);
}

Snapshot RedisNode::snapshot() const {
  auto data = std::make_shared<Snapshot::Data>();
  data->db.insert(impl_->db.begin(), impl_->db.end());
  return Snapshot{std::move(data)};
}

void RedisNode::restore(const Snapshot& snapshot) {
  const std::vector<const std::string*> old_keys = impl_->sorted_keys();
  Keyspace old = std::move(impl_->db);
  impl_->db.clear();
  if (snapshot.data) impl_->db.insert(snapshot.data->db.begin(), snapshot.data->db.end());
  for (const std::string* key : old_keys) impl_->touch(*key);
  if (snapshot.data) {
    for (const auto& kv : snapshot.data->db) impl_->touch(kv.first);
  }
}

std::optional<std::string> RedisNode::peek_string(const std::string& key) const {
  auto it = impl_->db.find(key);
  if (it == impl_->db.end() || it->second.v.type != VType::String) return std::nullopt;
  return it->second.v.str;
}

int64_t RedisNode::writer_of(const std::string& key) const {
  auto it = impl_->db.find(key);
  return it == impl_->db.end() ? -1 : it->second.writer;
}

size_t RedisNode::key_count() const { return impl_->db.size(); }

void RedisNode::set_random(Rng rng) { impl_->rng = rng; }
int64_t RedisNode::used_memory() const { return impl_->used_memory(); }
int64_t RedisNode::evicted_keys() const { return impl_->evicted_keys; }

std::optional<int64_t> RedisNode::expire_of(const std::string& key) const {
  auto it = impl_->db.find(key);
  if (it == impl_->db.end() || it->second.expire < 0) return std::nullopt;
  return it->second.expire;
}

}  // namespace lockstep::sim
