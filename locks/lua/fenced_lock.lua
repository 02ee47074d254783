-- Redisson's fenced lock, acquire: the reentrant hash lock (reentrant_lock.lua) that also
-- takes the next fencing token in the same script, so the token is ordered with the grant
-- itself. A client whose grant reply arrives late still carries the token of the moment
-- it was granted, below that of anyone granted after its lease ran out.
-- KEYS[1] lock key, KEYS[2] token counter; ARGV[1] lease in ms, ARGV[2] owner field.
-- Returns {-1, token} when the lock is ours now, else {remaining TTL of the holder, -1}.
if redis.call('exists', KEYS[1]) == 0 or redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  local token = redis.call('incr', KEYS[2])
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return {-1, token}
end
return {redis.call('pttl', KEYS[1]), -1}
