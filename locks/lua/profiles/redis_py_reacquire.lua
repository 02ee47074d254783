-- redis-py Lock.LUA_REACQUIRE_SCRIPT: set our lock's TTL back to the full timeout.
-- KEYS[1] lock name; ARGV[1] token; ARGV[2] ms. Returns 1 or 0.
local token = redis.call('get', KEYS[1])
if not token or token ~= ARGV[1] then
  return 0
end
redis.call('pexpire', KEYS[1], ARGV[2])
return 1
