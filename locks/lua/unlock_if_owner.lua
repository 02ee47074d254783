-- Compare-and-delete: remove the lock only if it still holds our token, atomically.
-- KEYS[1] lock key, ARGV[1] owner token. Returns 1 if deleted, 0 otherwise.
if redis.call("get", KEYS[1]) == ARGV[1] then
  return redis.call("del", KEYS[1])
else
  return 0
end
