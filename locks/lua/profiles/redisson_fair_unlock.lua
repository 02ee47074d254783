-- Redisson 3.43/3.44 RFairLock unlock: drop timed-out waiters (by the caller's clock),
-- count down, and on the last unlock wake the next waiter on its own channel.
-- KEYS[1] lock, KEYS[2] queue, KEYS[3] timeouts, KEYS[4] channel prefix, KEYS[5] latch;
-- ARGV[1] message, ARGV[2] lease ms, ARGV[3] owner, ARGV[4] caller's time ms,
-- ARGV[5] latch lifetime ms. Returns nil when not ours, 0 when still held, 1 when freed.
local latched = redis.call('get', KEYS[5])
if latched ~= false then
  return tonumber(latched)
end
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
if redis.call('exists', KEYS[1]) == 0 then
  local nextone = redis.call('lindex', KEYS[2], 0)
  if nextone ~= false then
    redis.call('publish', KEYS[4] .. ':' .. nextone, ARGV[1])
  end
  redis.call('set', KEYS[5], 1, 'px', ARGV[5])
  return 1
end
if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then
  return nil
end
local count = redis.call('hincrby', KEYS[1], ARGV[3], -1)
if count > 0 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  redis.call('set', KEYS[5], 0, 'px', ARGV[5])
  return 0
end
redis.call('del', KEYS[1])
redis.call('set', KEYS[5], 1, 'px', ARGV[5])
local nextone = redis.call('lindex', KEYS[2], 0)
if nextone ~= false then
  redis.call('publish', KEYS[4] .. ':' .. nextone, ARGV[1])
end
return 1
