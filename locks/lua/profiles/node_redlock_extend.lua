-- node-redlock's extend script: refuse unless every key holds our value, then set them
-- all again with the new TTL. KEYS: the resources; ARGV[1] our value; ARGV[2] ms.
-- Returns #KEYS or 0.
for _, key in ipairs(KEYS) do
  if redis.call("get", key) ~= ARGV[1] then
    return 0
  end
end
for _, key in ipairs(KEYS) do
  redis.call("set", key, ARGV[1], "PX", ARGV[2])
end
return #KEYS
