-- redsync 4.0.x deleteScript: delete the lock only if it still holds our value.
-- KEYS[1] lock key; ARGV[1] our value. Returns DEL's reply (1) or 0.
if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("DEL", KEYS[1])
end
return 0
