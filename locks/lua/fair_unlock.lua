-- Redisson's fair lock, release: drop waiters that gave up, then wake only the first in
-- line on its own channel. KEYS[1] lock, KEYS[2] queue, KEYS[3] timeouts, KEYS[4] channel
-- prefix; ARGV[1] message, ARGV[2] lease ms, ARGV[3] owner, ARGV[4] caller's now in ms.
-- Returns 1 when freed (also when the lock was already gone, as Redisson does), 0 when
-- still held (count > 0), nil when someone else holds it.
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
if redis.call('exists', KEYS[1]) == 0 then
  local nxt = redis.call('lindex', KEYS[2], 0)
  if nxt ~= false then redis.call('publish', KEYS[4] .. ':' .. nxt, ARGV[1]) end
  return 1
end
if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then
  return nil
end
local count = redis.call('hincrby', KEYS[1], ARGV[3], -1)
if count > 0 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  return 0
end
redis.call('del', KEYS[1])
local nxt = redis.call('lindex', KEYS[2], 0)
if nxt ~= false then redis.call('publish', KEYS[4] .. ':' .. nxt, ARGV[1]) end
return 1
