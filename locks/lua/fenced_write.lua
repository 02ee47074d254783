-- A store that checks fencing tokens: the write lands only if its token is at least the
-- highest one that has written before. KEYS[1] the value, KEYS[2] the highest token;
-- ARGV[1] new value, ARGV[2] the writer's token. Returns 1 if written, 0 if rejected.
local highest = tonumber(redis.call('get', KEYS[2]) or '-1')
if tonumber(ARGV[2]) < highest then
  return 0
end
redis.call('set', KEYS[2], ARGV[2])
redis.call('set', KEYS[1], ARGV[1])
return 1
