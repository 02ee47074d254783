-- redis-py Lock.LUA_EXTEND_SCRIPT: give our lock more time. KEYS[1] lock name;
-- ARGV[1] token; ARGV[2] ms; ARGV[3] "0" to add to the remaining TTL, "1" to replace it.
-- A key without a TTL is refused. Returns 1 or 0.
local token = redis.call('get', KEYS[1])
if not token or token ~= ARGV[1] then
  return 0
end
local remaining = redis.call('pttl', KEYS[1])
if not remaining then
  remaining = 0
end
if remaining < 0 then
  return 0
end
local ttl = ARGV[2]
if ARGV[3] == "0" then
  ttl = ARGV[2] + remaining
end
redis.call('pexpire', KEYS[1], ttl)
return 1
