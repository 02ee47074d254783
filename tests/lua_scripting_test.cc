// Lua scripting in the simulated node: EVAL/EVALSHA/SCRIPT, every conversion rule
// between Lua and Redis values, the redis.* API, error texts (checked against
// redis-server 7.0.15), atomicity with the clock frozen, and the lock scripts.
#include <gtest/gtest.h>

#include "lockstep/scripts.h"
#include "lockstep/sim/redis_node.h"
#include "reply_print.h"

namespace lockstep::sim {
namespace {

using Args = std::vector<std::string>;

class LuaScriptingTest : public ::testing::Test {
 protected:
  Reply eval(const std::string& script, Args keys = {}, Args args = {}, int64_t now = 1000) {
    Args argv{"EVAL", script, std::to_string(keys.size())};
    argv.insert(argv.end(), keys.begin(), keys.end());
    argv.insert(argv.end(), args.begin(), args.end());
    return node.execute(client, argv, now);
  }
  Reply run(const Args& argv, int64_t now = 1000) { return node.execute(client, argv, now); }
  // A script's array reply as text: integers in decimal, strings as they are.
  std::vector<std::string> eval_texts(const std::string& script, Args keys, Args args) {
    const Reply r = eval(script, std::move(keys), std::move(args));
    std::vector<std::string> out;
    for (const Reply& e : r.elements) out.push_back(e.type == Reply::Type::Integer ? std::to_string(e.integer) : e.str);
    return out;
  }

  RedisNode node;
  ClientState client;
};

using reply_short::bulk;
using reply_short::err;
using reply_short::num;

TEST_F(LuaScriptingTest, LuaToRedisConversions) {
  EXPECT_EQ(eval("return 3.99"), num(3));
  EXPECT_EQ(eval("return -3.99"), num(-3));
  EXPECT_EQ(eval("return -0.5"), num(0));
  EXPECT_EQ(eval("return 1e30"), num(INT64_MIN));
  EXPECT_EQ(eval("return 0/0"), num(INT64_MIN));
  EXPECT_EQ(eval("return 'x'"), bulk("x"));
  EXPECT_EQ(eval("return true"), num(1));
  EXPECT_EQ(eval("return false"), Reply::nil());
  EXPECT_EQ(eval("return nil"), Reply::nil());
  EXPECT_EQ(eval("return {}"), Reply::array({}));
  EXPECT_EQ(eval("return {1,2,nil,3}"), Reply::array({num(1), num(2)}));
  EXPECT_EQ(eval("return {true,false,'a'}"), Reply::array({num(1), Reply::nil(), bulk("a")}));
  EXPECT_EQ(eval("return {1, {2, {3}}, 'x', {ok='fine'}, {err='bad'}}"),
            Reply::array({num(1), Reply::array({num(2), Reply::array({num(3)})}), bulk("x"),
                          Reply::status("fine"), err("bad")}));
  EXPECT_EQ(eval("return {ok='FINE'}"), Reply::status("FINE"));
  EXPECT_EQ(eval("return {ok=1}"), Reply::array({}));  // not a string: an array
  EXPECT_EQ(eval("return {err='ERR x\\r\\ny'}"), err("ERR x  y"));
  EXPECT_EQ(eval("return 9007199254740993"), num(9007199254740992));
}

TEST_F(LuaScriptingTest, RedisToLuaConversions) {
  run({"SET", "s", "v"});
  run({"RPUSH", "l", "a", "b"});
  EXPECT_EQ(eval("return type(redis.call('get', 'nokey'))"), bulk("boolean"));
  EXPECT_EQ(eval("return redis.call('get', 'nokey') == false"), num(1));
  EXPECT_EQ(eval("return type(redis.call('incr', 'n'))"), bulk("number"));
  EXPECT_EQ(eval("return type(redis.call('get', 's'))"), bulk("string"));
  EXPECT_EQ(eval("return redis.call('set', 'a', 'b').ok"), bulk("OK"));
  EXPECT_EQ(eval("return redis.call('lrange', 'l', 0, -1)[2]"), bulk("b"));
  EXPECT_EQ(eval("return redis.pcall('incr', 'l').err"),
            bulk("WRONGTYPE Operation against a key holding the wrong kind of value"));
  EXPECT_EQ(eval("return type(redis.call('lpop', 'nolist', 2))"), bulk("boolean"));
  // Numbers reach commands as %.17g.
  EXPECT_EQ(eval("redis.call('set', 'f', 0.1) return redis.call('get', 'f')"),
            bulk("0.10000000000000001"));
  EXPECT_EQ(eval("redis.call('set', 'f', 1.5) return redis.call('get', 'f')"), bulk("1.5"));
}

TEST_F(LuaScriptingTest, KeysAndArgv) {
  EXPECT_EQ(eval("return KEYS", {"a", "b"}, {"c"}), Reply::array({bulk("a"), bulk("b")}));
  EXPECT_EQ(eval("return ARGV", {"a"}, {"c", "d"}), Reply::array({bulk("c"), bulk("d")}));
  EXPECT_EQ(eval("KEYS[1] = 1"), Reply::nil());
}

// Every script sees KEYS and ARGV as new tables holding exactly its own arguments,
// whatever the script before it did to them.
TEST_F(LuaScriptingTest, KeysAndArgvStartFreshAfterAScriptChangedThem) {
  const std::string shape =
      "return {#KEYS, #ARGV, tostring(getmetatable(KEYS)), tostring(getmetatable(ARGV)),"
      " tostring(KEYS.extra), tostring(KEYS[3]), tostring(ARGV[2]), table.concat(KEYS, ','),"
      " table.concat(ARGV, ',')}";
  auto seen = [&](Args keys, Args args) { return eval_texts(shape, std::move(keys), std::move(args)); };
  using V = std::vector<std::string>;
  EXPECT_EQ(seen({"a", "b"}, {"x"}), (V{"2", "1", "nil", "nil", "nil", "nil", "nil", "a,b", "x"}));
  // Grown, given a hash part and a metatable, then asked for fewer items.
  eval("KEYS[3] = 'c'; KEYS.extra = 1; ARGV[2] = 'y';"
       " setmetatable(KEYS, {__index = function() return 'meta' end}); setmetatable(ARGV, {})",
       {"a", "b"}, {"x"});
  EXPECT_EQ(seen({"k"}, {}), (V{"1", "0", "nil", "nil", "nil", "nil", "nil", "k", ""}));
  // Only overwritten in place, then asked for more items.
  eval("KEYS[1] = 'changed'; ARGV[1] = nil", {"a"}, {"x"});
  EXPECT_EQ(seen({"p", "q", "r"}, {"s", "t"}), (V{"3", "2", "nil", "nil", "nil", "r", "t", "p,q,r", "s,t"}));
  // Given a metatable and nothing else: the next run's table has none.
  eval("setmetatable(KEYS, {__index = function() return 'meta' end})", {"a"}, {});
  EXPECT_EQ(seen({"b"}, {}), (V{"1", "0", "nil", "nil", "nil", "nil", "nil", "b", ""}));
  // Emptied from the front, so that only the hash part is left.
  eval("for i = 1, #KEYS do KEYS[i] = nil end; KEYS.z = 'z'", {"a", "b", "c"}, {});
  EXPECT_EQ(seen({}, {}), (V{"0", "0", "nil", "nil", "nil", "nil", "nil", "", ""}));
  EXPECT_EQ(eval("local n = 0; for _ in pairs(KEYS) do n = n + 1 end; return n", {"a"}), num(1));
}

// A script that can change no table (no field assignment, no rawset, setmetatable or
// table library in reach) leaves KEYS and ARGV as it found them, and the next run only
// sets their items; any other script may have changed them, and the next run, whichever
// kind it is, still sees exactly its own arguments.
TEST_F(LuaScriptingTest, KeysAndArgvExactAfterScriptsOfEitherKind) {
  const std::string plain =
      "return {#KEYS, #ARGV, tostring(KEYS[1]), tostring(KEYS[2]), tostring(KEYS[3]),"
      " tostring(KEYS.extra), tostring(ARGV[1]), tostring(ARGV[2])}";
  auto seen = [&](Args keys, Args args) { return eval_texts(plain, std::move(keys), std::move(args)); };
  using V = std::vector<std::string>;
  EXPECT_EQ(seen({"a", "b", "c"}, {"x", "y"}), (V{"3", "2", "a", "b", "c", "nil", "x", "y"}));
  EXPECT_EQ(seen({"d"}, {}), (V{"1", "0", "d", "nil", "nil", "nil", "nil", "nil"}));
  EXPECT_EQ(seen({"e", "f"}, {"z"}), (V{"2", "1", "e", "f", "nil", "nil", "z", "nil"}));
  // Changed by assignment and given a metatable.
  eval("KEYS[3] = 'c'; KEYS.extra = 1; setmetatable(ARGV, {__index = function() return 'meta' end})",
       {"a", "b"}, {"x"});
  EXPECT_EQ(seen({"k"}, {}), (V{"1", "0", "k", "nil", "nil", "nil", "nil", "nil"}));
  // Changed only through library functions, with no assignment in the script.
  eval("table.insert(KEYS, 'z'); rawset(ARGV, 'extra', 1); table.insert(ARGV, 'w')", {"a"}, {"x"});
  EXPECT_EQ(seen({"k"}, {"v"}), (V{"1", "1", "k", "nil", "nil", "nil", "v", "nil"}));
  eval("local t = table; t.insert(KEYS, 'z')", {"a"}, {});
  EXPECT_EQ(seen({"k"}, {}), (V{"1", "0", "k", "nil", "nil", "nil", "nil", "nil"}));
  eval("local set = setmetatable; set(KEYS, {__index = function() return 'meta' end})", {"a"}, {});
  EXPECT_EQ(seen({"k"}, {}), (V{"1", "0", "k", "nil", "nil", "nil", "nil", "nil"}));
  // Through a function the script defines.
  eval("local function put(t) t.extra = 'e' end put(KEYS)", {"a"}, {});
  EXPECT_EQ(seen({"k"}, {}), (V{"1", "0", "k", "nil", "nil", "nil", "nil", "nil"}));
  // Raised as the error: the error handler tags the table with the script's line.
  eval("error(KEYS)", {"a"}, {});
  EXPECT_EQ(eval("return {tostring(KEYS.source), tostring(KEYS.line), #KEYS}", {"k"}, {}),
            Reply::array({bulk("nil"), bulk("nil"), num(1)}));
}

// A script that can change no table reads the libraries without their readonly proxies;
// what it reads is what any other script reads through them.
TEST_F(LuaScriptingTest, ScriptsThatChangeNoTableReadTheSameGlobals) {
  const std::string reads =
      "return {type(redis.call), tostring(redis.nonexistent), redis.REDIS_VERSION,"
      " string.format('%d', 5), math.floor(2.5), ('ab'):upper(), #redis, #string,"
      " select('#', unpack(KEYS)), redis.call('set', KEYS[1], ARGV[1]).ok, redis.call('get', KEYS[1])}";
  const Reply keeping = eval(reads, {"k", "l"}, {"v"});
  const Reply changing = eval("local t = {} t.x = 1 " + reads, {"k", "l"}, {"v"});
  EXPECT_EQ(keeping, changing);
  EXPECT_EQ(keeping, Reply::array({bulk("function"), bulk("nil"), bulk("7.0.15"), bulk("5"), num(2), bulk("AB"),
                                   num(0), num(0), num(2), bulk("OK"), bulk("v")}));
  for (const std::string script : {"return redis.call('get', nope)", "local t = {} t.x = 1 return redis.call('get', nope)"}) {
    const Reply missing = eval(script);
    EXPECT_EQ(missing.str.rfind("ERR user_script:1: Script attempted to access nonexistent global variable 'nope'", 0), 0u)
        << missing.str;
  }
}

TEST_F(LuaScriptingTest, EvalArgumentErrors) {
  EXPECT_EQ(run({"EVAL", "return 1", "-1"}), err("ERR Number of keys can't be negative"));
  EXPECT_EQ(run({"EVAL", "return 1", "2", "a"}),
            err("ERR Number of keys can't be greater than number of args"));
  EXPECT_EQ(run({"EVAL", "return 1", "x"}), err("ERR value is not an integer or out of range"));
  EXPECT_EQ(run({"EVAL", "return 1"}), err("ERR wrong number of arguments for 'eval' command"));
  EXPECT_EQ(eval("return 1 +"),
            err("ERR Error compiling script (new function): user_script:1: unexpected symbol "
                "near '<eof>'"));
}

TEST_F(LuaScriptingTest, ScriptErrorsCarryShaAndLine) {
  run({"RPUSH", "l", "a"});
  EXPECT_EQ(eval("return redis.call(\"incr\", KEYS[1])", {"l"}),
            err("WRONGTYPE Operation against a key holding the wrong kind of value script: "
                "024f02195a7e52e1776d26af209f8a79d0470e0f, on @user_script:1."));
  EXPECT_EQ(eval("return redis.pcall('incr', KEYS[1])", {"l"}),
            err("WRONGTYPE Operation against a key holding the wrong kind of value"));
  EXPECT_EQ(eval("return redis.call(\"nosuch\")"),
            err("ERR Unknown Redis command called from script script: "
                "2218effcac8108416909801acfb39c080a85adfa, on @user_script:1."));
  EXPECT_EQ(eval("return redis.call(\"get\")"),
            err("ERR Wrong number of args calling Redis command from script script: "
                "ad9cf9305028be601cfd2abed4ce895eb41a4a6f, on @user_script:1."));
  EXPECT_EQ(eval("return redis.pcall('nosuch')"),
            err("ERR Unknown Redis command called from script"));
  EXPECT_EQ(eval("return redis.call(\"set\",\"k\",\"v\",\"px\",\"0\")"),
            err("ERR invalid expire time in 'set' command script: "
                "e4ed7be39c12acdd314ef17edc5106c5e88e3d4a, on @user_script:1."));
  EXPECT_EQ(eval("error(\"boom\")"),
            err("ERR user_script:1: boom script: 872b3fcb081448525c6141cdfa3df8374d30d162, on "
                "@user_script:1."));
  EXPECT_EQ(eval("error({err=\"MY boom\"})"),
            err("MY boom script: 6f210a79061330ed689d8391066504f6e8d371f5, on @user_script:1."));
  EXPECT_EQ(eval("error()"),
            err("ERR nil script: aca90d914519fdb9825352bdc0befb59f7c8510f, on @user_script:1."));
  EXPECT_EQ(eval("return redis.call(\"eval\",\"return 1\",\"0\")"),
            err("ERR This Redis command is not allowed from script script: "
                "6e5056688d554bd41f2476fb72f36efaeccbfd64, on @user_script:1."));
  EXPECT_EQ(eval("return redis.call()"),
            err("ERR Please specify at least one argument for this redis lib call script: "
                "0a907e1429221a4d85516cab7fd219a82a9439d8, on @user_script:1."));
  EXPECT_EQ(eval("return redis.call(\"get\", {})"),
            err("ERR Lua redis lib command arguments must be strings or integers script: "
                "7a5fe891c214c0fa43feaefd41f433083050825e, on @user_script:1."));
}

// Error replies may not carry CR/LF: Redis turns them into spaces.
TEST_F(LuaScriptingTest, NewlinesInErrorsBecomeSpaces) {
  EXPECT_EQ(eval("error(\"a\\nb\")"),
            err("ERR user_script:1: a b script: c25efb1b406ca92aafb584691c5e64cb33f0c894, on "
                "@user_script:1."));
  EXPECT_EQ(eval("return redis.error_reply(\"x\\ny\")"), err("ERR x y"));
  EXPECT_EQ(eval("return {err=\"a\\nb\"}"), err("a b"));
}

// Redis 7.0's own pcall hands back a caught redis.call error as its message string.
TEST_F(LuaScriptingTest, LuaPcallCatchesRedisErrorsAsStrings) {
  run({"RPUSH", "l", "a"});
  EXPECT_EQ(eval("local ok, e = pcall(redis.call, 'incr', 'l') return {tostring(ok), e}"),
            Reply::array({bulk("false"),
                          bulk("WRONGTYPE Operation against a key holding the wrong kind of "
                               "value")}));
  EXPECT_EQ(eval("local ok, e = pcall(redis.call) return {tostring(ok), type(e), e}"),
            Reply::array({bulk("false"), bulk("string"),
                          bulk("ERR Please specify at least one argument for this redis lib "
                               "call")}));
  EXPECT_EQ(eval("return {pcall(function() return 1, 2 end)}"),
            Reply::array({num(1), num(1), num(2)}));
  EXPECT_EQ(eval("local a, b = pcall() return {tostring(a), tostring(b)}"),
            Reply::array({bulk("false"), bulk("attempt to call a boolean value")}));
}

TEST_F(LuaScriptingTest, ReadonlyGlobals) {
  EXPECT_EQ(eval("x = 1"),
            err("ERR user_script:1: Attempt to modify a readonly table script: "
                "34bce5f775de97f557a34088509c8bfe1ea17e52, on @user_script:1."));
  EXPECT_EQ(eval("return y"),
            err("ERR user_script:1: Script attempted to access nonexistent global variable "
                "'y' script: e278681ed961e2fb52881313e5c90fdd93749940, on @user_script:1."));
  EXPECT_EQ(eval("redis.call = nil"),
            err("ERR user_script:1: Attempt to modify a readonly table script: "
                "2786c35ed73d3860851cf52e0b5dfbbc0bdb4803, on @user_script:1."));
  EXPECT_EQ(eval("return type(debug)"),
            err("ERR user_script:1: Script attempted to access nonexistent global variable "
                "'debug' script: 21bcbd6f0f3639ee18732cb6907e65a4859b9625, on @user_script:1."));
  EXPECT_EQ(eval("return rawget(_G, 'x')"), Reply::nil());
  EXPECT_EQ(eval("local t = {} t.x = 1 return t.x"), num(1));
}

// A script that assigns no global reads its globals from the real table rather than
// through the readonly proxy; every way to write one is still refused, as redis-server
// 7.0.15 refuses it (which has no getfenv, setfenv or newproxy either), and refusing it
// leaves the globals as they were for the next script.
TEST_F(LuaScriptingTest, GlobalsStayReadonlyWhateverTheWayIn) {
  auto fails_with = [&](const std::string& script, const std::string& text) {
    const Reply r = eval(script);
    return r.is_error() && r.str.find(text) != std::string::npos;
  };
  const std::string readonly = "Attempt to modify a readonly table";
  EXPECT_TRUE(fails_with("local function f() y = 2 end f()", readonly));
  EXPECT_TRUE(fails_with("return (function() return function() KEYS = nil end end)()()", readonly));
  EXPECT_TRUE(fails_with("_G.redis = nil", readonly));
  for (const std::string name : {"getfenv", "setfenv", "newproxy"}) {
    EXPECT_TRUE(fails_with(name + "(1)", "nonexistent global variable '" + name + "'")) << name;
  }
  // rawset and setmetatable refuse readonly tables, real or proxy; strings' methods come
  // from the readonly string library. Redis's own texts, without a position for rawset's.
  const std::string raw_refused = "ERR Attempt to modify a readonly table script: ";
  EXPECT_EQ(eval("rawset(_G, 'x', 1)").str.rfind(raw_refused, 0), 0u);
  EXPECT_EQ(eval("rawset(string, 'x', 1)").str.rfind(raw_refused, 0), 0u);
  EXPECT_EQ(eval("rawset(getmetatable('').__index, 'x', 1)").str.rfind(raw_refused, 0), 0u);
  EXPECT_EQ(eval("setmetatable(string, nil)").str.rfind(raw_refused, 0), 0u);
  EXPECT_EQ(eval("setmetatable(getmetatable(''), nil)").str.rfind(raw_refused, 0), 0u);
  EXPECT_TRUE(fails_with("getmetatable('').__index.saved = 1", readonly));
  EXPECT_TRUE(fails_with("getmetatable('').saved = 1", readonly));
  EXPECT_EQ(eval("return rawequal(getmetatable('').__index, string)"), num(1));
  EXPECT_EQ(eval("return ('abc'):upper() .. ('x'):rep(2)"), bulk("ABCxx"));
  EXPECT_EQ(eval("local t = {} rawset(t, 'a', 1) return t.a + setmetatable({}, {__index = {b = 2}}).b"), num(3));
  EXPECT_EQ(eval("return {type(redis), type(KEYS), tostring(rawget(_G, 'y')), tostring(rawget(_G, 'z'))}"),
            Reply::array({bulk("table"), bulk("table"), bulk("nil"), bulk("nil")}));
  EXPECT_EQ(eval("return redis.call('set', KEYS[1], ARGV[1])", {"k"}, {"v"}), Reply::status("OK"));
  EXPECT_EQ(eval("local n = 0 for i = 1, 3 do n = n + #KEYS end return n", {"a", "b"}), num(6));
}

TEST_F(LuaScriptingTest, RedisApi) {
  EXPECT_EQ(eval("return redis.error_reply('My err')"), err("My err"));
  EXPECT_EQ(eval("return redis.error_reply('-My err')"), err("My err"));
  EXPECT_EQ(eval("return redis.error_reply('')"), err("ERR "));
  EXPECT_EQ(eval("return redis.error_reply(1)"), err("ERR wrong number or type of arguments"));
  EXPECT_EQ(eval("return redis.status_reply('FINE')"), Reply::status("FINE"));
  EXPECT_EQ(eval("return redis.status_reply()"), err("ERR wrong number or type of arguments"));
  EXPECT_EQ(eval("return redis.sha1hex('')"), bulk("da39a3ee5e6b4b0d3255bfef95601890afd80709"));
  EXPECT_EQ(eval("return redis.sha1hex('abc')"),
            bulk("a9993e364706816aba3e25717850c26c9cd0d89d"));
  EXPECT_EQ(eval("return redis.log(redis.LOG_WARNING, 'x')"), Reply::nil());
  EXPECT_EQ(eval("return redis.log()"),
            err("ERR redis.log() requires two arguments or more. script: "
                "28e28bf25123668ac541f5eec91bf7ad3d2fe0bd, on @user_script:1."));
  EXPECT_EQ(eval("return redis.sha1hex()"),
            err("ERR wrong number of arguments script: "
                "3c7ce947ae74a835cc575b6ee87fb27503cb7ba4, on @user_script:1."));
  EXPECT_EQ(eval("return redis.REDIS_VERSION"), bulk("7.0.15"));
}

// The sequence a fresh redis-server 7.0.15 gives: math.random is redisLrand48 seeded
// once with 0, continuing across scripts.
TEST_F(LuaScriptingTest, MathRandomIsDeterministic) {
  EXPECT_EQ(eval("return math.random(1000000)"), num(396465));
  EXPECT_EQ(eval("return {math.random(1000000), math.random()*1000000000}"),
            Reply::array({num(840486), num(353336097)}));
  run({"SCRIPT", "FLUSH"});  // the generator's state survives SCRIPT FLUSH...
  EXPECT_NE(eval("return math.random(1000000)"), num(396465));
  node.flush_all();  // ...but not a restart
  EXPECT_EQ(eval("return math.random(1000000)"), num(396465));
}

TEST_F(LuaScriptingTest, EvalShaAndScriptCommands) {
  EXPECT_EQ(run({"EVALSHA", "abc", "0"}), err("NOSCRIPT No matching script. Please use EVAL."));
  EXPECT_EQ(run({"SCRIPT", "LOAD", "return 1"}), bulk("e0e1f9fabfc9d4800c877a703b823ac0578ff8db"));
  EXPECT_EQ(run({"EVALSHA", "E0E1F9FABFC9D4800C877A703B823AC0578FF8DB", "0"}), num(1));
  EXPECT_EQ(run({"SCRIPT", "EXISTS", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "abc"}),
            Reply::array({num(1), num(0)}));
  EXPECT_EQ(run({"SCRIPT", "FLUSH"}), Reply::ok());
  EXPECT_EQ(run({"SCRIPT", "EXISTS", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db"}),
            Reply::array({num(0)}));
  EXPECT_EQ(run({"EVALSHA", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "0"}),
            err("NOSCRIPT No matching script. Please use EVAL."));
  EXPECT_EQ(run({"SCRIPT", "foo"}), err("ERR unknown subcommand 'foo'. Try SCRIPT HELP."));
  EXPECT_EQ(run({"SCRIPT"}), err("ERR wrong number of arguments for 'script' command"));
  EXPECT_EQ(run({"SCRIPT", "LOAD"}), err("ERR wrong number of arguments for 'script|load' command"));
  EXPECT_EQ(run({"SCRIPT", "FLUSH", "x"}), err("ERR SCRIPT FLUSH only support SYNC|ASYNC option"));
  EXPECT_EQ(run({"SCRIPT", "FLUSH", "ASYNC"}), Reply::ok());
}

TEST_F(LuaScriptingTest, CompareAndDeleteUnlock) {
  const std::string unlock =
      "if redis.call(\"get\",KEYS[1]) == ARGV[1] then return redis.call(\"del\",KEYS[1]) "
      "else return 0 end";
  run({"SET", "lock", "token-a", "NX", "PX", "30000"});
  EXPECT_EQ(eval(unlock, {"lock"}, {"token-b"}), num(0));
  EXPECT_EQ(run({"GET", "lock"}), bulk("token-a"));
  EXPECT_EQ(eval(unlock, {"lock"}, {"token-a"}), num(1));
  EXPECT_EQ(run({"EXISTS", "lock"}), num(0));
  EXPECT_EQ(eval(unlock, {"lock"}, {"token-a"}), num(0));
  // The project's own script file behaves the same.
  run({"SET", "lock", "t"});
  EXPECT_EQ(eval(script("unlock_if_owner"), {"lock"}, {"t"}), num(1));
}

// Time is frozen for the whole script: a key due to expire in the middle of it cannot,
// and a key already due is gone for all of it.
TEST_F(LuaScriptingTest, TimeFrozenInsideScript) {
  run({"SET", "k", "v", "PX", "100"}, 1000);
  EXPECT_EQ(eval("local a = redis.call('get', KEYS[1]) for i = 1, 100000 do end "
                 "return {a, redis.call('get', KEYS[1]), redis.call('pttl', KEYS[1])}",
                 {"k"}, {}, 1100),
            Reply::array({bulk("v"), bulk("v"), num(0)}));
  EXPECT_EQ(eval("return redis.call('get', KEYS[1])", {"k"}, {}, 1101), Reply::nil());
}

TEST_F(LuaScriptingTest, ObserverSeesScriptDeletes) {
  std::vector<KeyChange> events;
  node.set_observer([&](const KeyChange& c) { events.push_back(c); });
  ClientState owner;
  owner.process = 3;
  client.process = 5;
  node.execute(owner, {"SET", "lock", "t"}, 1000);
  eval("return redis.call('del', KEYS[1])", {"lock"});
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].kind, KeyChange::Kind::Del);
  EXPECT_EQ(events[1].writer, 3);
  EXPECT_EQ(events[1].by_process, 5);
}

// Simulator-specific: nobody can send SCRIPT KILL, so a runaway script is stopped.
TEST_F(LuaScriptingTest, RunawayScriptIsStopped) {
  const Reply r = eval("while true do end");
  ASSERT_TRUE(r.is_error());
  EXPECT_NE(r.str.find("instruction budget"), std::string::npos) << r.str;
  EXPECT_EQ(eval("return 1"), num(1));  // the interpreter is still usable
  const Reply caught = eval("while true do pcall(function() while true do end end) end");
  EXPECT_TRUE(caught.is_error()) << caught.str;  // pcall cannot swallow the stop
}

// Scripts that provably run each instruction at most once go without the budget's hook;
// every way back into a loop still meets it, whatever ran before.
TEST_F(LuaScriptingTest, EveryKindOfLoopMeetsTheBudgetAfterScriptsWithout) {
  const std::string bounded = "if redis.call('get', KEYS[1]) == ARGV[1] then return 1 else return 0 end";
  // A backward jump, a numeric for, a function of its own, a global that makes one.
  for (const std::string runaway : {
           "repeat until false",
           "for i = 1, math.huge do end",
           "local function f() return f() end return f()",
           "return pcall(loadstring('while true do end'))",
       }) {
    EXPECT_EQ(eval(bounded, {"k"}, {"v"}), num(0)) << runaway;
    const Reply r = eval(runaway);
    ASSERT_TRUE(r.is_error()) << runaway;
    EXPECT_NE(r.str.find("instruction budget"), std::string::npos) << runaway << ": " << r.str;
  }
  EXPECT_EQ(eval(bounded, {"k"}, {"v"}), num(0));
  EXPECT_EQ(eval("local n = 0 for i = 1, 10 do n = n + i end return n"), num(55));
}

TEST_F(LuaScriptingTest, DeeplyNestedReplyHitsStackLimit) {
  const Reply r = eval("local t = {} local c = t for i = 1, 100000 do c[1] = {} c = c[1] end "
                       "return t");
  const Reply* inner = &r;
  int depth = 0;
  for (; inner->type == Reply::Type::Array && !inner->elements.empty(); ++depth)
    inner = &inner->elements[0];
  EXPECT_EQ(depth, 7995);  // what redis-server 7.0.15 sends
  EXPECT_EQ(*inner, err("ERR reached lua stack limit"));
}

// The interpreter's allocator pools small blocks and takes large ones from malloc: tables
// and strings that grow through every size, past the pooled ones and back, must keep
// their contents, before and after SCRIPT FLUSH hands a fresh interpreter the old memory.
TEST_F(LuaScriptingTest, ValuesOfEverySizeSurviveGrowthAndFlush) {
  const char* script =
      "local t = {} for i = 1, 3000 do t[i] = string.rep(string.char(97 + i % 26), i % 700) end "
      "local n = 0 for i = 1, 3000 do n = n + #t[i] + string.byte(t[i] .. 'a') end "
      "local u = {} for i = 1, 3000 do u['k' .. i] = i end for i = 1, 2990 do u['k' .. i] = nil end "
      "for k, v in pairs(u) do n = n + v end return n";
  int64_t expected = 0;
  for (int i = 1; i <= 3000; ++i) expected += i % 700 + (i % 700 > 0 ? 97 + i % 26 : 97);
  for (int i = 2991; i <= 3000; ++i) expected += i;
  for (int round = 0; round < 3; ++round) {
    EXPECT_EQ(eval(script), num(expected));
    EXPECT_EQ(eval("return ARGV[1] .. string.rep('y', 600)", {}, {"x"}), Reply::bulk("x" + std::string(600, 'y')));
    EXPECT_EQ(run({"SCRIPT", "FLUSH"}), Reply::ok());
  }
}

// KEYS, ARGV and redis.call's string replies reach scripts through a small cache of
// recently pushed strings. Many more distinct strings than it holds, sharing their
// first and last bytes, empty ones and ones too long to cache, in turns that make them
// push each other out, must each arrive as exactly the string that was sent.
TEST_F(LuaScriptingTest, EveryStringArrivesAsSentWhateverTheCacheHeld) {
  const char* script =
      "redis.call('set', KEYS[1], ARGV[2]) "
      "return {KEYS[1], ARGV[1], ARGV[2], redis.call('get', KEYS[1]), #ARGV[2]}";
  std::vector<std::string> values{"", "a", std::string(128, 'x'), std::string(129, 'x'), std::string(500, 'q')};
  for (int i = 0; i < 700; ++i) {
    values.push_back("token-" + std::to_string(i) + "-end");
    values.push_back(std::string(8, 'p') + std::to_string(i % 37) + std::string(8, 's'));
  }
  for (int round = 0; round < 3; ++round) {
    for (size_t i = 0; i < values.size(); ++i) {
      const std::string& key = values[(i * 7 + static_cast<size_t>(round)) % values.size()];
      const std::string& a = values[i];
      const std::string& b = values[(i * 13 + 5) % values.size()];
      const Reply want = Reply::array(
          {Reply::bulk(key), Reply::bulk(a), Reply::bulk(b), Reply::bulk(b), num(static_cast<int64_t>(b.size()))});
      ASSERT_EQ(eval(script, {key}, {a, b}), want) << "round " << round << ", case " << i;
    }
    EXPECT_EQ(run({"SCRIPT", "FLUSH"}), Reply::ok());
  }
}

TEST_F(LuaScriptingTest, ScriptEffectsPropagateAsCommands) {
  std::vector<Args> stream;
  node.set_propagator([&](const Args& a) { stream.push_back(a); });
  eval("redis.call('set', KEYS[1], 'v', 'EX', 5) redis.call('get', KEYS[1]) "
       "return redis.call('incr', 'n')",
       {"k"});
  EXPECT_EQ(stream, (std::vector<Args>{{"MULTI"},
                                       {"SET", "k", "v", "PXAT", "6000"},
                                       {"incr", "n"},
                                       {"EXEC"}}));
}

}  // namespace
}  // namespace lockstep::sim
