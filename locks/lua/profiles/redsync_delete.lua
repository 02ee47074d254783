-- redsync 4.12+ deleteScript: as 4.0.x, but a key that is already gone answers -1
-- (ErrLockAlreadyExpired). KEYS[1] lock key; ARGV[1] our value.
local current = redis.call("GET", KEYS[1])
if current == ARGV[1] then
  return redis.call("DEL", KEYS[1])
end
if current == false then
  return -1
end
return 0
