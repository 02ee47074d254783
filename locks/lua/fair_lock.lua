-- Redisson's fair lock, acquire: a hash lock plus a FIFO queue of waiters (list) and each
-- waiter's give-up time (zset, on the CLIENTS' wall clocks, as Redisson sends them).
-- KEYS[1] lock, KEYS[2] queue, KEYS[3] timeouts; ARGV[1] lease ms, ARGV[2] owner,
-- ARGV[3] per-waiter wait ms, ARGV[4] the caller's wall-clock now in ms.
-- Returns nil when the lock is ours now, else how long to wait.
while true do
  local first = redis.call('lindex', KEYS[2], 0)
  if first == false then break end
  local timeout = tonumber(redis.call('zscore', KEYS[3], first))
  if timeout <= tonumber(ARGV[4]) then
    redis.call('zrem', KEYS[3], first)
    redis.call('lpop', KEYS[2])
  else
    break
  end
end
if redis.call('exists', KEYS[1]) == 0 and
    (redis.call('exists', KEYS[2]) == 0 or redis.call('lindex', KEYS[2], 0) == ARGV[2]) then
  redis.call('lpop', KEYS[2])
  redis.call('zrem', KEYS[3], ARGV[2])
  local waiters = redis.call('zrange', KEYS[3], 0, -1)
  for i = 1, #waiters do
    redis.call('zincrby', KEYS[3], -tonumber(ARGV[3]), waiters[i])
  end
  redis.call('hset', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
local mine = redis.call('zscore', KEYS[3], ARGV[2])
if mine ~= false then
  return tonumber(mine) - tonumber(ARGV[3]) - tonumber(ARGV[4])
end
local last = redis.call('lindex', KEYS[2], -1)
local ttl
if last ~= false and last ~= ARGV[2] then
  ttl = tonumber(redis.call('zscore', KEYS[3], last)) - tonumber(ARGV[4])
else
  ttl = redis.call('pttl', KEYS[1])
end
local timeout = ttl + tonumber(ARGV[3]) + tonumber(ARGV[4])
if redis.call('zadd', KEYS[3], timeout, ARGV[2]) == 1 then
  redis.call('rpush', KEYS[2], ARGV[2])
end
return ttl
