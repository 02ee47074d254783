-- Redisson's fair lock, a waiter that gave up leaves the line: the waiters behind it need
-- not wait its turn any more. KEYS[2] queue, KEYS[3] timeouts; ARGV[1] owner,
-- ARGV[2] per-waiter wait ms.
local queue = redis.call('lrange', KEYS[2], 0, -1)
local found = false
for i = 1, #queue do
  if found then
    redis.call('zincrby', KEYS[3], -tonumber(ARGV[2]), queue[i])
  elseif queue[i] == ARGV[1] then
    found = true
  end
end
redis.call('zrem', KEYS[3], ARGV[1])
redis.call('lrem', KEYS[2], 0, ARGV[1])
return 0
