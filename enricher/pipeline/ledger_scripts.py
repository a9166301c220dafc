"""The ledger's atomic steps, as Lua scripts Redis runs whole (enricher.pipeline.ledger).

Each script reads and writes one group's keys in one step, so two workers or two replicas
never interleave inside a claim, a record or a release. Times come from the Redis clock
(`TIME`), so clock skew between replicas does not move a lease.
"""

from __future__ import annotations

_NOW = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
"""

# Whether `holder` is an earlier process of the same worker id as `me` (enricher.pipeline.ledger).
_PREDECESSOR = """
local function predecessor(holder, me)
  if not holder or holder == me then return false end
  local worker = string.match(me, '^(.*):[^:]*$')
  return worker ~= nil and string.match(holder, '^(.*):[^:]*$') == worker
end
"""

CLAIM = (
    _NOW
    + _PREDECESSOR
    + """
local rec = redis.call('HMGET', KEYS[1], 'state', 'owner', 'claimed_at', 'lease_s',
                       'channel', 'ts', 'fingerprints', 'status', 'check_marker')
if rec[1] == 'posted' then return {'posted', rec[5], rec[6], rec[7], rec[8]} end
local previous = ''
local check = '0'
if rec[1] == 'claimed' then
  local age = now - tonumber(rec[3])
  local leftover = rec[2] == ARGV[1] and ARGV[5] == '1'
  if age <= tonumber(rec[4]) and not predecessor(rec[2], ARGV[1]) and not leftover then
    return {'inflight', rec[2], string.format('%.6f', age)}
  end
  previous = rec[2]
  check = '1'
elseif rec[1] == 'pending' then
  check = rec[9] or '0'
end
redis.call('HSET', KEYS[1], 'state', 'claimed', 'owner', ARGV[1],
           'claimed_at', string.format('%.6f', now), 'lease_s', ARGV[2], 'group_key', ARGV[4])
redis.call('HDEL', KEYS[1], 'check_marker')
redis.call('EXPIRE', KEYS[1], ARGV[3])
return {'claimed', previous, check}
"""
)

REOPEN = (
    _NOW
    + """
if redis.call('HGET', KEYS[1], 'state') ~= 'posted'
   or redis.call('HGET', KEYS[1], 'status') ~= 'resolved' then return 0 end
for _, field in ipairs(redis.call('HKEYS', KEYS[1])) do
  local prefix = string.sub(field, 1, 4)
  if prefix == 'out:' or prefix == 'try:' then redis.call('HDEL', KEYS[1], field) end
end
redis.call('HSET', KEYS[1], 'state', 'claimed', 'owner', ARGV[1],
           'claimed_at', string.format('%.6f', now), 'lease_s', ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[3])
return 1
"""
)

RECORD = """
local state = redis.call('HGET', KEYS[1], 'state')
if state and redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'state', 'posted', 'owner', ARGV[1], 'channel', ARGV[2],
           'ts', ARGV[3], 'fingerprints', ARGV[4], 'status', ARGV[5], 'group_key', ARGV[7],
           'received_at', ARGV[8], 'message', ARGV[9], 'severity', ARGV[10],
           'acknowledged', ARGV[11], 'acknowledged_at', ARGV[12])
redis.call('HDEL', KEYS[1], 'out:post', 'try:post')
redis.call('EXPIRE', KEYS[1], ARGV[6])
return 1
"""

RELEASE = """
if redis.call('HGET', KEYS[1], 'state') ~= 'claimed'
   or redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then return 0 end
if ARGV[2] == '1' then
  redis.call('HSET', KEYS[1], 'state', 'pending', 'owner', '', 'check_marker', ARGV[3])
  return 1
end
return redis.call('DEL', KEYS[1])
"""

# After an outage cut a job off mid-way: whatever its claim became, the post may have gone
# out. A claim of ours, or the intake's "pending" (our claim may have been lost with a
# primary that died before a replica had it), is flagged for a marker lookup.
CUT_OFF = """
local state = redis.call('HGET', KEYS[1], 'state')
if state ~= 'pending' and (state ~= 'claimed' or redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1])
then return 0 end
redis.call('HSET', KEYS[1], 'state', 'pending', 'owner', '', 'check_marker', '1')
return 1
"""

HOLD_RESOLVE = (
    _PREDECESSOR
    + """
local holder = redis.call('GET', KEYS[1])
-- The workers of one process share its owner id: a hold under our own id is another
-- worker's, live. Only an earlier process's hold is taken over.
if holder and not predecessor(holder, ARGV[1]) then
  return redis.call('PTTL', KEYS[1])
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return -1
"""
)

RELEASE_RESOLVE = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
return redis.call('DEL', KEYS[1])
"""

ABANDON = """
if redis.call('HGET', KEYS[1], 'state') ~= 'pending' then return 0 end
return redis.call('DEL', KEYS[1])
"""

UPDATE = """
if redis.call('HGET', KEYS[1], 'state') ~= 'posted' then return 0 end
if ARGV[2] ~= '' then redis.call('HDEL', KEYS[1], 'out:' .. ARGV[2], 'try:' .. ARGV[2]) end
if #ARGV > 2 then redis.call('HSET', KEYS[1], unpack(ARGV, 3)) end
redis.call('EXPIRE', KEYS[1], ARGV[1])
return 1
"""

# A record that is gone (expired) has nothing to guard: no key is made for the note alone.
NOTE_OUTPUT = (
    _NOW
    + """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
return redis.call('HSET', KEYS[1], ARGV[1], string.format('%.6f', now))
"""
)
