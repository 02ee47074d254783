-- Redisson 3.44.0 LockTask: renew every lock of this client in one script; each key
-- answers 1 when its owner field is still there (and gets the lease again), else 0.
-- KEYS: lock names; ARGV[1] lease in ms; ARGV[i+1] the owner field of KEYS[i].
local result = {}
for i = 1, #KEYS do
  if redis.call('hexists', KEYS[i], ARGV[i + 1]) == 1 then
    redis.call('pexpire', KEYS[i], ARGV[1])
    table.insert(result, 1)
  else
    table.insert(result, 0)
  end
end
return result
