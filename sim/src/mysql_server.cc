// The simulated MySQL server's sessions, named locks and lock-table rows; the contract is
// in lockstep/sim/mysql_server.h.
#include "lockstep/sim/mysql_server.h"

#include <algorithm>
#include <cassert>
#include <charconv>
#include <cmath>
#include <cstdlib>

namespace lockstep::sim {
namespace {

constexpr int64_t kNsPerS = 1'000'000'000;

SqlResult one(SqlValue v) { return SqlResult::ok_rows({{std::move(v)}}); }
SqlResult one(int64_t v) { return one(SqlValue(std::to_string(v))); }

// A whole decimal integer, as a BIGINT column takes it in strict mode.
std::optional<int64_t> integer(const std::string& s) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

// A string where a number is expected in an expression: its numeric prefix, or 0, as
// MariaDB converts it (with a warning nobody reads).
double lenient_number(const std::string& s) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  return end == s.c_str() || !std::isfinite(v) ? 0.0 : v;
}

}  // namespace

MysqlServer::MysqlServer(Hooks hooks) : MysqlServer(std::move(hooks), Settings{}) {}

MysqlServer::MysqlServer(Hooks hooks, Settings settings) : hooks_(std::move(hooks)), settings_(settings) {}

uint64_t MysqlServer::open() {
  const uint64_t id = next_id_++;
  Session& s = sessions_[id];
  s.id = id;
  s.wait_timeout_s = settings_.wait_timeout_s;
  s.lock_wait_timeout_s = settings_.lock_wait_timeout_s;
  schedule_idle_check(s);
  return id;
}

void MysqlServer::execute(uint64_t id, const std::string& text, const std::vector<SqlValue>& params) {
  auto it = sessions_.find(id);
  assert(it != sessions_.end() && !it->second.busy);
  Session& s = it->second;
  ++s.idle_id;  // busy now: no idle check may end it
  s.busy = true;
  const auto statement = recognise(text);
  if (!statement) {
    finish(s, SqlResult::error(sql_error::kNotSupported,
                               "This version of MariaDB doesn't yet support '" + text +
                                   "' (the simulated server knows only the statements listed in docs/mysql.md)"));
    return;
  }
  if (statement->param_count != params.size()) {
    finish(s, SqlResult::error(sql_error::kParse, "the statement has " + std::to_string(statement->param_count) +
                                                      " placeholders and " + std::to_string(params.size()) +
                                                      " parameters were given"));
    return;
  }
  s.statement = *statement;
  s.params = params;
  run(s);
}

void MysqlServer::run(Session& s) {
  const auto& p = s.params;
  switch (s.statement.kind) {
    case Kind::GetLock: get_lock(s); return;
    case Kind::ReleaseLock:
      if (!p[0]) return finish(s, one(SqlValue{}));
      release_named(s, *p[0]);
      return;
    case Kind::IsUsedLock: {
      const uint64_t holder = p[0] ? named_lock_holder(*p[0]) : 0;
      return finish(s, one(holder ? SqlValue(std::to_string(holder)) : SqlValue{}));
    }
    case Kind::IsFreeLock:
      if (!p[0]) return finish(s, one(SqlValue{}));
      return finish(s, one(named_lock_holder(*p[0]) ? 0 : 1));
    case Kind::ReleaseAllLocks: {
      int64_t count = 0;
      std::vector<std::string> names;
      for (const auto& [name, n] : s.named) {
        count += n;
        names.push_back(name);
      }
      s.named.clear();
      for (const auto& name : names) named_[name].holder = 0;
      finish(s, one(count));
      for (const auto& name : names) hand_over(name);
      return;
    }
    case Kind::ConnectionId: return finish(s, one(static_cast<int64_t>(s.id)));
    case Kind::SelectOne: return finish(s, one(1));
    case Kind::Begin:
      // A BEGIN inside a transaction commits it first, as MariaDB does.
      s.undo.clear();
      release_rows(s);
      s.in_transaction = true;
      return finish(s, SqlResult::ok_affected(0));
    case Kind::Commit:
      s.in_transaction = false;  // finish() drops the undo log and the row locks
      return finish(s, SqlResult::ok_affected(0));
    case Kind::Rollback:
      rollback(s);
      return finish(s, SqlResult::ok_affected(0));
    case Kind::SetWaitTimeout:
    case Kind::SetLockWaitTimeout: {
      const bool idle = s.statement.kind == Kind::SetWaitTimeout;
      const char* var = idle ? "wait_timeout" : "innodb_lock_wait_timeout";
      const auto v = s.statement.param_count == 0 ? integer(s.statement.number) : std::nullopt;
      if (!v) return finish(s, SqlResult::error(sql_error::kWrongTypeForVar, std::string("Incorrect argument type to variable '") + var + "'"));
      // Out-of-range values are clamped to the variable's range, as SET does.
      if (idle) s.wait_timeout_s = std::clamp<int64_t>(*v, 1, 31536000);
      else s.lock_wait_timeout_s = std::clamp<int64_t>(*v, 0, 100000000);
      return finish(s, SqlResult::ok_affected(0));
    }
    case Kind::CreateTable:
      tables_.try_emplace(s.statement.table);
      return finish(s, SqlResult::ok_affected(0));
    case Kind::Insert:
    case Kind::Select:
    case Kind::SelectForUpdate:
    case Kind::UpdateTakeOver:
    case Kind::UpdateOwner:
    case Kind::UpdateExtend:
    case Kind::Delete:
      if (!tables_.count(s.statement.table)) {
        return finish(s, SqlResult::error(sql_error::kNoSuchTable, "Table 'lockstep." + s.statement.table + "' doesn't exist"));
      }
      run_row_statement(s);
      return;
  }
}

void MysqlServer::finish(Session& s, SqlResult result) {
  assert(s.busy);
  s.busy = false;
  s.waiting_row.reset();
  s.waiting_named.reset();
  if (!s.in_transaction) {
    // Autocommit: the statement was its own transaction, and it is over.
    s.undo.clear();
    release_rows(s);
  }
  schedule_idle_check(s);
  hooks_.answer(s.id, std::move(result));
}

void MysqlServer::schedule_idle_check(Session& s) {
  const uint64_t id = s.id;
  const uint64_t idle = ++s.idle_id;
  hooks_.at(hooks_.now_ns() + s.wait_timeout_s * kNsPerS, [this, id, idle] {
    auto it = sessions_.find(id);
    if (it != sessions_.end() && !it->second.busy && it->second.idle_id == idle) end(id);
  });
}

void MysqlServer::close(uint64_t id) {
  if (sessions_.count(id)) end(id);
}

void MysqlServer::end(uint64_t id) {
  Session& s = sessions_.at(id);
  if (s.waiting_row) std::erase(row_waiters_[*s.waiting_row], id);
  if (s.waiting_named) std::erase(named_[*s.waiting_named].waiters, id);
  std::vector<std::string> names;
  for (const auto& [name, n] : s.named) {
    named_[name].holder = 0;
    names.push_back(name);
  }
  s.named.clear();
  s.busy = false;
  rollback(s);  // wakes those waiting for its rows: they must not find it
  sessions_.erase(id);
  for (const auto& name : names) hand_over(name);
}

void MysqlServer::crash() {
  // Uncommitted changes are undone by crash recovery, newest first.
  for (auto& [id, s] : sessions_) {
    for (auto u = s.undo.rbegin(); u != s.undo.rend(); ++u) {
      if (u->before) tables_[u->key.first][u->key.second] = *u->before;
      else tables_[u->key.first].erase(u->key.second);
    }
  }
  sessions_.clear();
  named_.clear();
  row_owner_.clear();
  row_waiters_.clear();
  next_id_ = 1;  // a restarted server counts connections from 1 again
}

uint64_t MysqlServer::named_lock_holder(const std::string& name) const {
  auto it = named_.find(name);
  return it == named_.end() ? 0 : it->second.holder;
}

void MysqlServer::get_lock(Session& s) {
  const auto& p = s.params;
  if (!p[0]) return finish(s, one(SqlValue{}));
  const std::string& name = *p[0];
  const double timeout_s = p[1] ? lenient_number(*p[1]) : 0.0;
  NamedLock& lock = named_[name];
  if (lock.holder == 0 || lock.holder == s.id) {
    lock.holder = s.id;
    ++s.named[name];
    return finish(s, one(1));
  }
  if (timeout_s == 0) return finish(s, one(0));
  lock.waiters.push_back(s.id);
  s.waiting_named = name;
  const uint64_t wait = ++s.wait_id;
  if (timeout_s < 0) return;  // waits until it gets the lock or the session ends
  const uint64_t id = s.id;
  const auto timeout_ns = static_cast<int64_t>(std::llround(timeout_s * 1e9));
  hooks_.at(hooks_.now_ns() + timeout_ns, [this, id, wait, name] {
    auto it = sessions_.find(id);
    if (it == sessions_.end() || it->second.wait_id != wait || it->second.waiting_named != name) return;
    std::erase(named_[name].waiters, id);
    finish(it->second, one(0));
  });
}

void MysqlServer::release_named(Session& s, const std::string& name) {
  const uint64_t holder = named_lock_holder(name);
  if (holder == 0) return finish(s, one(SqlValue{}));
  if (holder != s.id) return finish(s, one(0));
  if (--s.named[name] > 0) return finish(s, one(1));
  s.named.erase(name);
  named_[name].holder = 0;
  finish(s, one(1));
  hand_over(name);
}

// Gives a free named lock to its first waiter still waiting.
void MysqlServer::hand_over(const std::string& name) {
  auto it = named_.find(name);
  if (it == named_.end() || it->second.holder != 0) return;
  NamedLock& lock = it->second;
  while (!lock.waiters.empty()) {
    const uint64_t w = lock.waiters.front();
    lock.waiters.pop_front();
    auto sit = sessions_.find(w);
    if (sit == sessions_.end() || sit->second.waiting_named != name) continue;
    lock.holder = w;
    ++sit->second.named[name];
    finish(sit->second, one(1));
    return;
  }
  named_.erase(it);
}

bool MysqlServer::lock_row(Session& s, const RowKey& key) {
  auto it = row_owner_.find(key);
  if (it == row_owner_.end()) {
    row_owner_[key] = s.id;
    s.row_locks.insert(key);
    return true;
  }
  if (it->second == s.id) return true;
  if (s.lock_wait_timeout_s == 0) {
    finish(s, SqlResult::error(sql_error::kLockWaitTimeout, "Lock wait timeout exceeded; try restarting transaction"));
    return false;
  }
  row_waiters_[key].push_back(s.id);
  s.waiting_row = key;
  const uint64_t wait = ++s.wait_id;
  const uint64_t id = s.id;
  hooks_.at(hooks_.now_ns() + s.lock_wait_timeout_s * kNsPerS, [this, id, wait, key] {
    auto sit = sessions_.find(id);
    if (sit == sessions_.end() || sit->second.wait_id != wait || sit->second.waiting_row != key) return;
    std::erase(row_waiters_[key], id);
    // Only the statement is undone (innodb_rollback_on_timeout is off): the transaction
    // and the locks it holds go on.
    finish(sit->second, SqlResult::error(sql_error::kLockWaitTimeout, "Lock wait timeout exceeded; try restarting transaction"));
  });
  return false;
}

void MysqlServer::release_rows(Session& s) {
  const std::set<RowKey> keys = std::move(s.row_locks);
  s.row_locks.clear();
  for (const RowKey& key : keys) row_owner_.erase(key);
  for (const RowKey& key : keys) {
    // The first waiter still waiting runs its statement again, which takes the lock.
    auto wit = row_waiters_.find(key);
    while (wit != row_waiters_.end() && !wit->second.empty() && !row_owner_.count(key)) {
      const uint64_t w = wit->second.front();
      wit->second.pop_front();
      auto sit = sessions_.find(w);
      if (sit == sessions_.end() || sit->second.waiting_row != key) continue;
      sit->second.waiting_row.reset();
      run_row_statement(sit->second);
      wit = row_waiters_.find(key);
    }
    if (wit != row_waiters_.end() && wit->second.empty()) row_waiters_.erase(wit);
  }
}

void MysqlServer::rollback(Session& s) {
  for (auto u = s.undo.rbegin(); u != s.undo.rend(); ++u) {
    if (u->before) tables_[u->key.first][u->key.second] = *u->before;
    else tables_[u->key.first].erase(u->key.second);
  }
  s.undo.clear();
  s.in_transaction = false;
  release_rows(s);
}

void MysqlServer::write_row(Session& s, const RowKey& key, std::optional<Row> row) {
  Table& table = tables_[key.first];
  auto it = table.find(key.second);
  s.undo.push_back({key, it == table.end() ? std::nullopt : std::optional<Row>(it->second)});
  if (row) table[key.second] = *row;
  else table.erase(key.second);
}

std::optional<MysqlServer::Row> MysqlServer::visible(const Session& s, const RowKey& key) const {
  auto owner = row_owner_.find(key);
  if (owner != row_owner_.end() && owner->second != s.id) {
    // Another transaction's change is not committed: read what was there before it.
    for (const Undo& u : sessions_.at(owner->second).undo) {
      if (u.key == key) return u.before;
    }
  }
  const Table& table = tables_.at(key.first);
  auto it = table.find(key.second);
  return it == table.end() ? std::nullopt : std::optional<Row>(it->second);
}

std::optional<MysqlServer::Row> MysqlServer::committed_row(const std::string& table, const std::string& key) const {
  if (!tables_.count(table)) return std::nullopt;
  auto owner = row_owner_.find({table, key});
  if (owner != row_owner_.end()) {
    for (const Undo& u : sessions_.at(owner->second).undo) {
      if (u.key == RowKey{table, key}) return u.before;
    }
  }
  auto it = tables_.at(table).find(key);
  return it == tables_.at(table).end() ? std::nullopt : std::optional<Row>(it->second);
}

void MysqlServer::run_row_statement(Session& s) {
  const auto& p = s.params;
  const Kind kind = s.statement.kind;
  // The key is the name parameter: first but in the two UPDATEs and the DELETE's shape.
  const SqlValue& name = kind == Kind::UpdateTakeOver || kind == Kind::UpdateOwner ? p[2]
                         : kind == Kind::UpdateExtend                               ? p[1]
                                                                                    : p[0];
  auto row_of = [](const std::optional<Row>& r) {
    if (!r) return SqlResult::ok_rows({});
    return SqlResult::ok_rows({{r->owner, r->expires_at ? SqlValue(std::to_string(*r->expires_at)) : SqlValue{},
                                std::to_string(r->version)}});
  };
  if (!name) {
    if (kind == Kind::Insert) return finish(s, SqlResult::error(sql_error::kNotNull, "Column 'name' cannot be null"));
    return finish(s, kind == Kind::Select || kind == Kind::SelectForUpdate ? SqlResult::ok_rows({}) : SqlResult::ok_affected(0));
  }
  const RowKey key{s.statement.table, *name};
  if (kind == Kind::Select) return finish(s, row_of(visible(s, key)));
  if (!lock_row(s, key)) return;  // waiting (or already answered with 1205)
  const Table& table = tables_.at(key.first);
  auto it = table.find(key.second);
  const std::optional<Row> current = it == table.end() ? std::nullopt : std::optional<Row>(it->second);
  auto bigint = [&](const SqlValue& v, const char* column, std::optional<int64_t>& out) {
    if (!v) return true;
    out = integer(*v);
    if (out) return true;
    finish(s, SqlResult::error(sql_error::kWrongValue, "Incorrect integer value: '" + *v + "' for column `lockstep`.`" +
                                                           key.first + "`.`" + column + "` at row 1"));
    return false;
  };
  switch (kind) {
    case Kind::SelectForUpdate: return finish(s, row_of(current));
    case Kind::Insert: {
      if (current) {
        return finish(s, SqlResult::error(sql_error::kDupEntry, "Duplicate entry '" + key.second + "' for key 'PRIMARY'"));
      }
      Row row{p[1], std::nullopt, 0};
      std::optional<int64_t> version;
      if (!bigint(p[2], "expires_at", row.expires_at) || !bigint(p[3], "version", version)) return;
      if (!version) return finish(s, SqlResult::error(sql_error::kNotNull, "Column 'version' cannot be null"));
      row.version = *version;
      write_row(s, key, row);
      return finish(s, SqlResult::ok_affected(1));
    }
    case Kind::UpdateTakeOver: {
      // NULL < anything is NULL, which matches no row: a row without expiry never expires.
      const bool expired = current && current->expires_at && p[3] &&
                           static_cast<double>(*current->expires_at) < lenient_number(*p[3]);
      if (!expired) return finish(s, SqlResult::ok_affected(0));
      Row row{p[0], std::nullopt, current->version + 1};
      if (!bigint(p[1], "expires_at", row.expires_at)) return;
      write_row(s, key, row);
      return finish(s, SqlResult::ok_affected(1));
    }
    case Kind::UpdateOwner: {
      // Whatever the row holds: the caller checked its expiry itself (a read before).
      if (!current) return finish(s, SqlResult::ok_affected(0));
      Row row{p[0], std::nullopt, current->version + 1};
      if (!bigint(p[1], "expires_at", row.expires_at)) return;
      write_row(s, key, row);
      return finish(s, SqlResult::ok_affected(1));
    }
    case Kind::UpdateExtend: {
      if (!current || !current->owner || !p[2] || *current->owner != *p[2]) return finish(s, SqlResult::ok_affected(0));
      Row row = *current;
      if (!bigint(p[0], "expires_at", row.expires_at)) return;
      // The affected count is of rows changed, not matched (no CLIENT_FOUND_ROWS).
      if (row == *current) return finish(s, SqlResult::ok_affected(0));
      write_row(s, key, row);
      return finish(s, SqlResult::ok_affected(1));
    }
    case Kind::Delete: {
      if (!current || !current->owner || !p[1] || *current->owner != *p[1]) return finish(s, SqlResult::ok_affected(0));
      write_row(s, key, std::nullopt);
      return finish(s, SqlResult::ok_affected(1));
    }
    default: assert(false && "not a row statement"); return;
  }
}

}  // namespace lockstep::sim
