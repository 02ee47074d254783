-- redsync touchWithSetNXScript (WithSetNXOnExtend): reset our key's expiry, or take the
-- key again when it has gone. KEYS[1] lock key; ARGV[1] our value; ARGV[2] ms.
if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("PEXPIRE", KEYS[1], ARGV[2])
end
if redis.call("SET", KEYS[1], ARGV[1], "PX", ARGV[2], "NX") then
  return 1
end
return 0
