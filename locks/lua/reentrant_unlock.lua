-- Reentrant hash lock, release. KEYS[1] lock key, KEYS[2] its wake-up channel;
-- ARGV[1] unlock message, ARGV[2] lease in ms, ARGV[3] owner field.
-- Returns nil when we are not the owner, 0 when still held (count > 0), 1 when freed.
if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then
  return nil
end
local count = redis.call('hincrby', KEYS[1], ARGV[3], -1)
if count > 0 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  return 0
end
redis.call('del', KEYS[1])
redis.call('publish', KEYS[2], ARGV[1])
return 1
