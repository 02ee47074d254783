-- Redisson 3.43/3.44 RFairLock tryLock script (the ttl-returning variant). Waiters queue
-- in a list with give-up times in a sorted set, computed from the caller's own clock.
-- KEYS[1] lock, KEYS[2] queue, KEYS[3] timeouts; ARGV[1] lease ms, ARGV[2] owner,
-- ARGV[3] wait ms, ARGV[4] the caller's current time in ms.
-- Returns nil when the lock is ours, else how long to wait (ms).
while true do
  local head = redis.call('lindex', KEYS[2], 0)
  if head == false then
    break
  end
  local giveup = redis.call('zscore', KEYS[3], head)
  if giveup ~= false and tonumber(giveup) <= tonumber(ARGV[4]) then
    redis.call('zrem', KEYS[3], head)
    redis.call('lpop', KEYS[2])
  else
    break
  end
end
if (redis.call('exists', KEYS[1]) == 0) and
   ((redis.call('exists', KEYS[2]) == 0) or (redis.call('lindex', KEYS[2], 0) == ARGV[2])) then
  redis.call('lpop', KEYS[2])
  redis.call('zrem', KEYS[3], ARGV[2])
  local waiting = redis.call('zrange', KEYS[3], 0, -1)
  for i = 1, #waiting do
    redis.call('zincrby', KEYS[3], -tonumber(ARGV[3]), waiting[i])
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
if redis.call('zscore', KEYS[3], ARGV[2]) ~= false then
  return math.max(0, redis.call('pttl', KEYS[1]))
end
local last = redis.call('lindex', KEYS[2], -1)
local ttl
if last ~= false and last ~= ARGV[2] then
  ttl = tonumber(redis.call('zscore', KEYS[3], last)) - tonumber(ARGV[4])
else
  ttl = redis.call('pttl', KEYS[1])
end
local giveup = ttl + tonumber(ARGV[3]) + tonumber(ARGV[4])
if redis.call('zadd', KEYS[3], giveup, ARGV[2]) == 1 then
  redis.call('rpush', KEYS[2], ARGV[2])
end
return ttl
