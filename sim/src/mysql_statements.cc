// The statements the simulated MySQL server knows, recognised by shape: the text is put
// in a canonical form (lower case, no space around punctuation, one space elsewhere, no
// trailing semicolon), as is each shape, and the two compared, where %t stands for a table name and
// %d for digits. It is not a parser: a statement means what its shape says, and one of
// another shape is refused by name.
#include <cctype>
#include <string_view>

#include "lockstep/sim/mysql_server.h"

namespace lockstep::sim {
namespace {

bool punctuation(char c) { return std::string_view("(),=+<*;").find(c) != std::string_view::npos; }

std::string canonical(const std::string& text) {
  std::string out;
  bool space = false;
  for (char raw : text) {
    const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(raw)));
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = true;
      continue;
    }
    if (space && !out.empty() && !punctuation(c) && !punctuation(out.back())) out += ' ';
    space = false;
    out += c;
  }
  while (!out.empty() && out.back() == ';') out.pop_back();
  return out;
}

bool identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Whether `text` has the shape `pattern`; the table name into `table`, the last %d's
// digits into `number`.
bool matches(std::string_view pattern, std::string_view text, std::string& table, std::string& number) {
  size_t t = 0;
  for (size_t p = 0; p < pattern.size(); ++p) {
    if (pattern[p] == '%' && p + 1 < pattern.size()) {
      const char what = pattern[++p];
      const size_t start = t;
      if (what == 't') {
        while (t < text.size() && identifier_char(text[t])) ++t;
        if (t == start || std::isdigit(static_cast<unsigned char>(text[start]))) return false;
        table = std::string(text.substr(start, t - start));
      } else {
        while (t < text.size() && std::isdigit(static_cast<unsigned char>(text[t]))) ++t;
        if (t == start) return false;
        number = std::string(text.substr(start, t - start));
      }
      continue;
    }
    if (t >= text.size() || text[t] != pattern[p]) return false;
    ++t;
  }
  return t == text.size();
}

struct Shape {
  std::string_view pattern;
  MysqlServer::Kind kind;
};

using K = MysqlServer::Kind;
constexpr Shape kShapes[] = {
    {"select get_lock(?,?)", K::GetLock},
    {"select release_lock(?)", K::ReleaseLock},
    {"select is_used_lock(?)", K::IsUsedLock},
    {"select is_free_lock(?)", K::IsFreeLock},
    {"select release_all_locks()", K::ReleaseAllLocks},
    {"select connection_id()", K::ConnectionId},
    {"select 1", K::SelectOne},
    {"begin", K::Begin},
    {"start transaction", K::Begin},
    {"commit", K::Commit},
    {"rollback", K::Rollback},
    // A session variable's value is a number in the text: MariaDB refuses a string (a
    // placeholder's quoted literal) with 1232, and so does the server for the `?` forms.
    {"set wait_timeout=%d", K::SetWaitTimeout},
    {"set session wait_timeout=%d", K::SetWaitTimeout},
    {"set innodb_lock_wait_timeout=%d", K::SetLockWaitTimeout},
    {"set session innodb_lock_wait_timeout=%d", K::SetLockWaitTimeout},
    {"set wait_timeout=?", K::SetWaitTimeout},
    {"set session wait_timeout=?", K::SetWaitTimeout},
    {"set innodb_lock_wait_timeout=?", K::SetLockWaitTimeout},
    {"set session innodb_lock_wait_timeout=?", K::SetLockWaitTimeout},
    {"create table if not exists %t(name varchar(%d) primary key,owner varchar(%d),expires_at bigint,version bigint)",
     K::CreateTable},
    {"create table if not exists %t(name varchar(%d) not null primary key,owner varchar(%d),expires_at bigint,version "
     "bigint not null)",
     K::CreateTable},
    {"insert into %t(name,owner,expires_at,version)values(?,?,?,?)", K::Insert},
    {"select owner,expires_at,version from %t where name=?", K::Select},
    {"select owner,expires_at,version from %t where name=? for update", K::SelectForUpdate},
    {"update %t set owner=?,expires_at=?,version=version+1 where name=? and expires_at<?", K::UpdateTakeOver},
    {"update %t set owner=?,expires_at=?,version=version+1 where name=?", K::UpdateOwner},
    {"update %t set expires_at=? where name=? and owner=?", K::UpdateExtend},
    {"delete from %t where name=? and owner=?", K::Delete},
};

}  // namespace

std::optional<MysqlServer::Statement> MysqlServer::recognise(const std::string& text) {
  const std::string c = canonical(text);
  for (const Shape& shape : kShapes) {
    std::string table, number;
    // The shapes are written readably and put in the same canonical form as the text.
    static thread_local std::vector<std::string> patterns;
    if (patterns.empty()) {
      for (const Shape& sh : kShapes) patterns.push_back(canonical(std::string(sh.pattern)));
    }
    if (!matches(patterns[static_cast<size_t>(&shape - kShapes)], c, table, number)) continue;
    Statement s{shape.kind, table, 0, number};
    for (char ch : shape.pattern) s.param_count += ch == '?';
    return s;
  }
  return std::nullopt;
}

}  // namespace lockstep::sim
