-- Read-write lock, write side: only when nobody holds the hash, or reentrantly by the
-- thread that already writes (each reentry adds a lease, as Redisson does).
-- KEYS[1] lock key; ARGV[1] lease in ms; ARGV[2] writer field (<uuid>:<thread>:write).
-- Returns nil when the write lock is ours now, else the remaining TTL of the hash.
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
  redis.call('hset', KEYS[1], 'mode', 'write')
  redis.call('hset', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
if mode == 'write' and redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], redis.call('pttl', KEYS[1]) + tonumber(ARGV[1]))
  return nil
end
return redis.call('pttl', KEYS[1])
