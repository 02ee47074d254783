-- Read-write lock, write side, release. KEYS[1] lock key, KEYS[2] its wake-up channel;
-- ARGV[1] unlock message, ARGV[2] lease in ms, ARGV[3] writer field.
-- Returns nil when this thread is not the writer, 0 while its write holds remain, 1 when
-- its write lock is gone. Read holds the writer took stay, with the mode back to 'read'.
-- Every waiter hears the release: readers may all enter at once.
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
  redis.call('publish', KEYS[2], ARGV[1])
  return 1
end
if mode ~= 'write' or redis.call('hexists', KEYS[1], ARGV[3]) == 0 then
  return nil
end
if redis.call('hincrby', KEYS[1], ARGV[3], -1) > 0 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  return 0
end
redis.call('hdel', KEYS[1], ARGV[3])
if redis.call('hlen', KEYS[1]) == 1 then
  redis.call('del', KEYS[1])
else
  redis.call('hset', KEYS[1], 'mode', 'read')
end
redis.call('publish', KEYS[2], ARGV[1])
return 1
