-- node-redlock's unlock script (v4 unlockScript, v5 RELEASE_SCRIPT): delete each key
-- that still holds our value. KEYS: the resources; ARGV[1] our value.
-- Returns how many keys were deleted.
local deleted = 0
for _, key in ipairs(KEYS) do
  if redis.call("get", key) == ARGV[1] then
    redis.pcall("del", key)
    deleted = deleted + 1
  end
end
return deleted
