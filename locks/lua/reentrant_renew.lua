-- Watchdog renewal: extend the lease only while the owner still holds the lock.
-- KEYS[1] lock key; ARGV[1] lease in ms; ARGV[2] owner field. Returns 1 if renewed.
if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('pexpire', KEYS[1], ARGV[1])
  return 1
end
return 0
