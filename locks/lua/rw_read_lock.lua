-- Read-write lock (the Redisson recipe), read side. One hash holds the mode ('read' or
-- 'write') and a hold count per owner field. Readers share the hash; a writer excludes
-- everyone but itself, and the thread that holds the write lock may also read.
-- Unlike Redisson there are no per-reader timeout keys: the hash lives as long as the
-- longest lease any reader asked for.
-- KEYS[1] lock key; ARGV[1] lease in ms; ARGV[2] reader field (<uuid>:<thread>);
-- ARGV[3] the same thread's writer field (<uuid>:<thread>:write).
-- Returns nil when the read lock is ours now, else the remaining TTL of the hash.
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
  redis.call('hset', KEYS[1], 'mode', 'read')
  redis.call('hset', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
if mode == 'read' or (mode == 'write' and redis.call('hexists', KEYS[1], ARGV[3]) == 1) then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  local left = redis.call('pttl', KEYS[1])
  redis.call('pexpire', KEYS[1], math.max(left, tonumber(ARGV[1])))
  return nil
end
return redis.call('pttl', KEYS[1])
