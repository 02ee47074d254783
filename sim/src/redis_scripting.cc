// EVAL, EVALSHA and SCRIPT LOAD/EXISTS/FLUSH/KILL (eval.c of Redis 7.0). Scripts run on
// the node's single interpreter, atomically, with the clock frozen at the moment the
// command arrived: a key cannot expire halfway through, which is what keeps a script's
// replicated effects identical to what it saw.
#include "lua_bridge.h"
#include "redis_impl.h"
#include "redis_scripting.h"

namespace lockstep::sim {

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
  const size_t first_arg = 3 + static_cast<size_t>(numkeys);
  const std::span<const std::string> all(a);
  return m.lua->run(*script, c, all.subspan(3, first_arg - 3), all.subspan(first_arg));
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
                            {"eval", -3, kNoScript, cmd_eval},
                            {"evalsha", -3, kNoScript, cmd_evalsha},
                            {"script", -2, kNoScript | kContainer, cmd_script},
                            {"script|load", 3, kNoScript, cmd_script_load},
                            {"script|exists", -3, kNoScript, cmd_script_exists},
                            {"script|flush", -2, kNoScript, cmd_script_flush},
                            {"script|kill", 2, kNoScript, cmd_script_kill},
                        });
}

}  // namespace lockstep::sim
