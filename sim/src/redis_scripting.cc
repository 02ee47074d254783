// EVAL, EVALSHA and SCRIPT LOAD/EXISTS/FLUSH/KILL (eval.c of Redis 7.0). Scripts run on
// the node's single interpreter, atomically, with the clock frozen at the moment the
// command arrived: a key cannot expire halfway through, which is what keeps a script's
// replicated effects identical to what it saw.
#include <cstring>
#include <string_view>

#include "lockstep/cluster_slot.h"
#include "lockstep/sim/shell.h"
#include "lua_bridge.h"
#include "redis_impl.h"
#include "redis_scripting.h"

namespace lockstep::sim {

// The first line is read as the server reads it: as a C string (up to a NUL), split as
// redis-cli splits a line, each flag compared whole.
bool script_shebang(const std::string& body, unsigned& flags, size_t& skip, std::string& why) {
  flags = kScriptCompat;
  skip = 0;
  const char* text = body.c_str();
  if (std::strncmp(text, "#!", 2) != 0) return true;
  const char* line_end = std::strchr(text, '\n');
  if (!line_end) {
    why = "Invalid script shebang";
    return false;
  }
  skip = static_cast<size_t>(line_end - text);
  const auto parts = split_cli_args(std::string_view(text, skip));
  if (!parts || parts->empty()) {
    why = "Invalid engine in script shebang";
    return false;
  }
  if (std::strcmp((*parts)[0].c_str(), "#!lua") != 0) {
    why = std::string("Unexpected engine in script shebang: ") + (*parts)[0].c_str();
    return false;
  }
  static constexpr std::pair<const char*, unsigned> kNames[] = {
      {"no-writes", kScriptNoWrites},    {"allow-oom", kScriptAllowOom},
      {"allow-stale", kScriptAllowStale}, {"no-cluster", kScriptNoCluster},
      {"allow-cross-slot-keys", kScriptAllowCrossSlot},
  };
  flags = 0;
  for (size_t j = 1; j < parts->size(); ++j) {
    const std::string& part = (*parts)[j];
    if (std::strncmp(part.c_str(), "flags=", 6) != 0) {
      why = std::string("Unknown lua shebang option: ") + part.c_str();
      return false;
    }
    // sdssplitlen: nothing for an empty list, an empty name between two commas.
    const std::string list = part.substr(6);
    for (size_t at = 0; !list.empty() && at <= list.size();) {
      const size_t comma = std::min(list.find(',', at), list.size());
      const std::string name = list.substr(at, comma - at);
      unsigned flag = 0;
      for (const auto& [known, bit] : kNames) {
        if (std::strcmp(name.c_str(), known) == 0) flag = bit;
      }
      if (!flag) {
        why = std::string("Unexpected flag in script shebang: ") + name.c_str();
        return false;
      }
      flags |= flag;
      at = comma + 1;
    }
  }
  return true;
}

namespace {

using Impl = NodeCore;

Reply err_noscript() { return Reply::error("NOSCRIPT No matching script. Please use EVAL."); }

std::string lower_sha(const std::string& s) {
  std::string out = s;
  for (auto& ch : out)
    if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
  return out;
}

Reply eval_generic(Impl& m, ClientState& c, const Args& a, bool by_sha) {
  if (by_sha && a[1].size() != 40) return err_noscript();
  int64_t numkeys = 0;
  if (!string_to_ll(a[2], numkeys)) return err_not_integer();
  if (numkeys > static_cast<int64_t>(a.size()) - 3)
    return Reply::error("ERR Number of keys can't be greater than number of args");
  if (numkeys < 0) return Reply::error("ERR Number of keys can't be negative");
  const LuaEngine::Script* script = nullptr;
  if (by_sha) {
    script = m.lua->find(lower_sha(a[1]));
    if (!script) return err_noscript();
  } else {
    Reply err;
    script = m.lua->load(a[1], err);
    if (!script) return err;
  }
  // scriptPrepareForRun: what a script's shebang declares is checked before it runs.
  const unsigned flags = script->flags;
  if (!(flags & kScriptCompat)) {
    if ((flags & kScriptNoCluster) && m.cluster)
      return Reply::error("ERR Can not run script on cluster, 'no-cluster' flag is set.");
    if (!(flags & kScriptNoWrites) && m.replica && !c.is_master_link)
      return Reply::error("READONLY Can not run script with write flag on readonly replica");
    if (m.script_oom && m.memory.maxmemory > 0 && !(flags & (kScriptAllowOom | kScriptNoWrites)))
      return Reply::error(
          "OOM allow-oom flag is not set on the script, can not run it when used memory > 'maxmemory'");
  }
  const size_t first_arg = 3 + static_cast<size_t>(numkeys);
  const std::span<const std::string> all(a);
  const int slot = m.cluster && numkeys > 0 ? key_hash_slot(a[3]) : -1;
  return m.lua->run(*script, c, all.subspan(3, first_arg - 3), all.subspan(first_arg), slot);
}

Reply cmd_eval(Impl& m, ClientState& c, const Args& a) { return eval_generic(m, c, a, false); }
Reply cmd_evalsha(Impl& m, ClientState& c, const Args& a) { return eval_generic(m, c, a, true); }

Reply cmd_script_load(Impl& m, ClientState&, const Args& a) {
  Reply err;
  const LuaEngine::Script* script = m.lua->load(a[2], err);
  if (!script) return err;
  return Reply::bulk(script->sha);
}

Reply cmd_script_exists(Impl& m, ClientState&, const Args& a) {
  std::vector<Reply> out;
  for (size_t i = 2; i < a.size(); ++i)
    out.push_back(Reply::integer_of(m.lua->has(lower_sha(a[i])) ? 1 : 0));
  return Reply::array(std::move(out));
}

Reply cmd_script_flush(Impl& m, ClientState&, const Args& a) {
  if (a.size() > 3 || (a.size() == 3 && !iequals(a[2], "sync") && !iequals(a[2], "async")))
    return Reply::error("ERR SCRIPT FLUSH only support SYNC|ASYNC option");
  m.lua->flush_scripts();
  return Reply::ok();
}

// Scripts are atomic here: none can be running when another command arrives.
Reply cmd_script_kill(Impl&, ClientState&, const Args&) {
  return Reply::error("NOTBUSY No scripts in execution right now.");
}

Reply cmd_script(Impl&, ClientState&, const Args&) { return err_arity("script"); }

}  // namespace

void register_script_commands(std::vector<Command>& out) {
  out.insert(out.end(), {
                            {"eval", -3, kNoScript | kRunsScript, cmd_eval},
                            {"evalsha", -3, kNoScript | kRunsScript, cmd_evalsha},
                            {"script", -2, kNoScript | kContainer, cmd_script},
                            {"script|load", 3, kNoScript, cmd_script_load},
                            {"script|exists", -3, kNoScript, cmd_script_exists},
                            {"script|flush", -2, kNoScript, cmd_script_flush},
                            {"script|kill", 2, kNoScript, cmd_script_kill},
                        });
}

}  // namespace lockstep::sim
