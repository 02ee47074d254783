-- node-redlock's lock script (v4 lockScript, v5 ACQUIRE_SCRIPT): refuse if any of the
-- keys exists, else set them all to our value with the TTL.
-- KEYS: the resources; ARGV[1] our value; ARGV[2] TTL in ms. Returns #KEYS or 0.
for _, key in ipairs(KEYS) do
  if redis.call("exists", key) == 1 then
    return 0
  end
end
for _, key in ipairs(KEYS) do
  redis.call("set", key, ARGV[1], "PX", ARGV[2])
end
return #KEYS
