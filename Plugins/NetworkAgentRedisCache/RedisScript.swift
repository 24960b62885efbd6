/// The Lua scripts a ``RedisStore`` runs, each one command and atomic: loaded once per connection with
/// `SCRIPT LOAD` and called with `EVALSHA`.
///
/// Keys: `<prefix>:e:<identifier>` an entry (EntryCodec bytes, with a TTL); `<prefix>:v:<primary key>` the set of
/// identifiers of one resource's variants for one user; `<prefix>:u:<url>` the set of variant-set keys for one URL;
/// `<prefix>:l:<identifier>` a revalidation lock. The scripts build entry keys from the identifiers they read, so
/// they need a standalone Redis (or one shard), not a cluster.
///
/// The scripts repair what they cannot read: a key of another type where they expect a set or an entry (left by
/// another program, a bad migration) is deleted, or overwritten by a write, instead of failing every command on it
/// with `WRONGTYPE` for the key's whole TTL.
enum RedisScript: Int, CaseIterable, Sendable {
    /// KEYS[1] the variant set; ARGV[1] the entry-key prefix. Returns identifier, value, identifier, value, …; drops
    /// identifiers whose entry expired or was evicted from the set.
    case read
    /// KEYS[1] the entry, KEYS[2] the variant set, KEYS[3] the URL set; ARGV[1] the bytes, ARGV[2] the TTL in ms,
    /// ARGV[3] the identifier. Writes the entry with `SET … PX` and lets both sets live at least as long.
    case write
    /// KEYS[1] the entry, KEYS[2] the variant set; ARGV[1] the identifier. Returns the number of entries removed.
    case remove
    /// KEYS[1] the URL set; ARGV[1] the entry-key prefix. Removes every entry of every variant set it lists.
    case removeURL
    /// KEYS[1] the lock; ARGV[1] a new holder's token, ARGV[2] the lease in ms. Takes the lock with `SET NX PX`
    /// (after deleting a key of another type); returns 1 when taken, 0 when another holder has it.
    case claim
    /// KEYS[1] the lock; ARGV[1] the holder's token. Deletes the lock only if that holder still has it.
    case release
    /// KEYS[1] the lock; ARGV[1] the holder's token, ARGV[2] the lease in ms. Extends the lock only if that holder
    /// still has it; returns 1 then, else 0.
    case renew

    /// Lua shared by the scripts: `expect(key, type)` deletes a key of another type and says whether the key is
    /// there with the expected type; `members(key)` is a set's members (none for a key of another type, deleted).
    private static let prelude = """
        local function expect(key, kind)
          local actual = redis.call('TYPE', key).ok
          if actual ~= kind and actual ~= 'none' then redis.call('DEL', key) end
          return actual == kind
        end
        local function members(key)
          if expect(key, 'set') then return redis.call('SMEMBERS', key) end
          return {}
        end

        """

    var source: String { Self.prelude + body }

    private var body: String {
        switch self {
        case .read:
            // The hit path: `SMEMBERS` and `GET` are tried as they are, and only a key of another type (the error
            // `pcall` returns) takes the repair of `expect`; a `TYPE` before each read cost two calls per hit.
            """
            local out = {}
            local ids = redis.pcall('SMEMBERS', KEYS[1])
            if ids.err then
              redis.call('DEL', KEYS[1])
              return out
            end
            for _, id in ipairs(ids) do
              local key = ARGV[1] .. id
              local value = redis.pcall('GET', key)
              if type(value) == 'table' and value.err then
                redis.call('DEL', key)
                redis.call('SREM', KEYS[1], id)
              elseif value then
                out[#out + 1] = id
                out[#out + 1] = value
              else
                redis.call('SREM', KEYS[1], id)
              end
            end
            return out
            """
        case .write:
            """
            local ttl = tonumber(ARGV[2])
            redis.call('SET', KEYS[1], ARGV[1], 'PX', ttl)
            expect(KEYS[2], 'set')
            redis.call('SADD', KEYS[2], ARGV[3])
            if redis.call('PTTL', KEYS[2]) < ttl then redis.call('PEXPIRE', KEYS[2], ttl) end
            expect(KEYS[3], 'set')
            redis.call('SADD', KEYS[3], KEYS[2])
            if redis.call('PTTL', KEYS[3]) < ttl then redis.call('PEXPIRE', KEYS[3], ttl) end
            return 1
            """
        case .remove:
            """
            if expect(KEYS[2], 'set') then redis.call('SREM', KEYS[2], ARGV[1]) end
            return redis.call('DEL', KEYS[1])
            """
        case .removeURL:
            """
            local removed = 0
            for _, set in ipairs(members(KEYS[1])) do
              for _, id in ipairs(members(set)) do
                removed = removed + redis.call('DEL', ARGV[1] .. id)
              end
              redis.call('DEL', set)
            end
            redis.call('DEL', KEYS[1])
            return removed
            """
        case .release:
            """
            if expect(KEYS[1], 'string') and redis.call('GET', KEYS[1]) == ARGV[1] then
              return redis.call('DEL', KEYS[1])
            end
            return 0
            """
        case .claim:
            """
            expect(KEYS[1], 'string')
            if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
            return 0
            """
        case .renew:
            """
            if expect(KEYS[1], 'string') and redis.call('GET', KEYS[1]) == ARGV[1] then
              return redis.call('PEXPIRE', KEYS[1], ARGV[2])
            end
            return 0
            """
        }
    }
}
