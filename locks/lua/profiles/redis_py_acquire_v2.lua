-- redis-py 2.10.6 LuaLock.LUA_ACQUIRE_SCRIPT: SETNX and, when a timeout is given, PEXPIRE
-- inside one script, so no client can stop between them. KEYS[1] lock name; ARGV[1]
-- token; ARGV[2] ms, or '' for no TTL. Returns 1 when taken, else 0.
if redis.call('setnx', KEYS[1], ARGV[1]) == 1 then
  if ARGV[2] ~= '' then
    redis.call('pexpire', KEYS[1], ARGV[2])
  end
  return 1
end
return 0
