-- Redisson RLock unlock since 3.24.0: a latch key per unlock request makes a resent
-- unlock answer what the first one did instead of counting down twice (#4871).
-- KEYS[1] lock, KEYS[2] its channel, KEYS[3] the latch; ARGV[1] unlock message,
-- ARGV[2] lease in ms, ARGV[3] owner field, ARGV[4] latch lifetime in ms.
-- Returns nil when not ours, 0 when still held, 1 when freed.
local latched = redis.call('get', KEYS[3])
if latched ~= false then
  return tonumber(latched)
end
if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then
  return nil
end
local count = redis.call('hincrby', KEYS[1], ARGV[3], -1)
if count > 0 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  redis.call('set', KEYS[3], 0, 'px', ARGV[4])
  return 0
end
redis.call('del', KEYS[1])
redis.call('publish', KEYS[2], ARGV[1])
redis.call('set', KEYS[3], 1, 'px', ARGV[4])
return 1
