-- redis-py Lock.LUA_RELEASE_SCRIPT: delete the lock only while it holds our token.
-- KEYS[1] lock name; ARGV[1] token. Returns 1 when deleted, else 0.
local token = redis.call('get', KEYS[1])
if not token or token ~= ARGV[1] then
  return 0
end
redis.call('del', KEYS[1])
return 1
