-- redsync touchScript (Extend): reset the expiry of our own key only.
-- KEYS[1] lock key; ARGV[1] our value; ARGV[2] expiry in ms. Returns 1 or 0.
if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("PEXPIRE", KEYS[1], ARGV[2])
end
return 0
