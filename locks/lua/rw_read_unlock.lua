-- Read-write lock, read side, release. KEYS[1] lock key, KEYS[2] its wake-up channel;
-- ARGV[1] unlock message, ARGV[2] reader field.
-- Returns nil when this thread holds no read lock, 0 while the hash stays (more holds of
-- ours, other readers, or our own write lock), 1 when the hash is gone. As in Redisson, a
-- release finding no lock at all answers 1.
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
  redis.call('publish', KEYS[2], ARGV[1])
  return 1
end
if redis.call('hexists', KEYS[1], ARGV[2]) == 0 then
  return nil
end
if redis.call('hincrby', KEYS[1], ARGV[2], -1) == 0 then
  redis.call('hdel', KEYS[1], ARGV[2])
end
-- 'mode' is one field: more than one means someone still holds the lock.
if redis.call('hlen', KEYS[1]) > 1 then
  return 0
end
redis.call('del', KEYS[1])
redis.call('publish', KEYS[2], ARGV[1])
return 1
