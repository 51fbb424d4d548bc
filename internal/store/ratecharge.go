package store

import (
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// A rate-limit charge (Allow, Lease) is one script that moves a bucket's theoretical arrival
// time forward. go-redis sends a command again when the answer to its first attempt timed out
// or its connection broke (RedisConfig.MaxRetries; a Cluster client also tries again on its
// own), and a Redis that stalled longer than the read timeout runs every copy once it
// wakes: each copy charged the bucket, so a call could be refused that the limit allowed, and a
// lease's refund was given back once per copy, admitting more than the limit.
//
// Each charge therefore also writes a marker of its own, a key holding the script's answer,
// beside the bucket: a copy that finds its charge's marker answers what the first copy did and
// changes nothing. The bucket's value keeps its format (the theoretical arrival time, a
// decimal integer of microseconds), which replicas of the previous release read and write
// with their own scripts during a rolling update; they never look at the markers.

// chargeLua are the Lua functions both charging scripts start with. seen returns the answer
// recorded by an earlier copy of this charge (KEYS[2], the marker, when the call has one), or
// nil; charged records answer r in the marker for ttl ms and returns it.
const chargeLua = `
local function seen()
  if not KEYS[2] then return nil end
  local was = redis.call('GET', KEYS[2])
  if not was then return nil end
  local r = {}
  for n in string.gmatch(was, '%-?%d+') do r[#r + 1] = tonumber(n) end
  return r
end
local function charged(r, ttl)
  if KEYS[2] then
    redis.call('SET', KEYS[2], string.format('%d %d %d %d', r[1], r[2], r[3], r[4]), 'PX', ttl)
  end
  return r
end
`

// chargeMarks is how a Redis store marks its rate-limit charges.
type chargeMarks struct {
	prefix string
	// ttl is how long a marker lives (chargeWindow); 0 when the client never resends, and
	// charges are not marked.
	ttl     time.Duration
	cluster bool
}

// keys are the KEYS of a charging script: the bucket of key and, when charges are marked, the
// marker of this call's charge, named by a token from token (Redis.token).
func (m chargeMarks) keys(key string, token func() string) []string {
	bucket := redisKey(m.prefix, kindRate, key)
	if m.ttl <= 0 {
		return []string{bucket}
	}
	mark, ok := chargeKey(m.prefix, bucket, token(), m.cluster)
	if !ok {
		return []string{bucket}
	}
	return []string{bucket, mark}
}

// chargeKey is the key of one charge's marker: under the prefix (the least-privilege ACL
// grants only that) and in the bucket's hash slot, since a Cluster runs a script only on keys
// of one slot. A bucket's key has a hash tag only when the prefix holds one; otherwise its slot
// is that of the whole key, which the marker names as its tag. A prefix with an unmatched "{"
// or "}" leaves no such key in a Cluster (ok false: the charge goes unmarked, as before).
func chargeKey(prefix, bucket, token string, cluster bool) (string, bool) {
	if hasHashTag(bucket) {
		return bucket + ":c:" + token, true // the same first tag as the bucket's
	}
	if cluster && strings.ContainsAny(bucket, "{}") {
		return "", false
	}
	return prefix + "rlc:{" + bucket + "}:" + token, true
}

// hasHashTag reports whether Redis Cluster hashes key by a tag: a "{" followed, not at once,
// by a "}".
func hasHashTag(key string) bool {
	_, rest, ok := strings.Cut(key, "{")
	end := strings.IndexByte(rest, '}')
	return ok && end > 0
}

// chargeWindow is how long a charge's marker must live: until every copy the client may send
// of the charging script has reached Redis. Each attempt waits at most for a connection from
// the pool, its dial, writing, reading and the backoff before the next; a Cluster client tries
// each node's client (with its own retries) again up to MaxRedirects times. chargeSlack more
// covers a copy's way to Redis and its wait there behind others. Zero when the client never
// sends a command twice.
func chargeWindow(c redis.UniversalClient) time.Duration {
	attempt := func(pool, dial, write, read, backoff time.Duration) time.Duration {
		return max(pool, 0) + max(dial, 0) + max(write, 0) + max(read, 0) + max(backoff, 0)
	}
	var resends int
	var each time.Duration
	switch c := c.(type) {
	case *redis.Client:
		o := c.Options()
		resends, each = max(o.MaxRetries, 0), attempt(o.PoolTimeout, o.DialTimeout, o.WriteTimeout, o.ReadTimeout, o.MaxRetryBackoff)
	case *redis.ClusterClient:
		o := c.Options()
		resends = (max(o.MaxRetries, 0)+1)*(max(o.MaxRedirects, 0)+1) - 1
		each = attempt(o.PoolTimeout, o.DialTimeout, o.WriteTimeout, o.ReadTimeout, o.MaxRetryBackoff)
	default:
		return time.Minute // a client of another kind: long enough for any retry
	}
	if resends == 0 {
		return 0
	}
	return time.Duration(resends)*each + chargeSlack
}

// chargeSlack is what chargeWindow adds to the client's own bounds.
const chargeSlack = time.Second
