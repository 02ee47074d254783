-- Reentrant hash lock, acquire (the Redisson recipe): the hash field is the owner
-- (<client-uuid>:<thread>), its value the hold count.
-- KEYS[1] lock key; ARGV[1] lease in ms; ARGV[2] owner field.
-- Returns nil when the lock is ours now, else the remaining TTL of whoever holds it.
if redis.call('exists', KEYS[1]) == 0 or redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
return redis.call('pttl', KEYS[1])
