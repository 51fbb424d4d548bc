package store

import (
	"crypto/sha256"
	"encoding/base64"
)

// kind separates the uses of the store so that the same caller key cannot
// collide across them.
type kind byte

const (
	kindOnce kind = iota + 1
	kindRate
	kindValue
	kindHold
	// kindReplay and kindReplayOwner are Replay's ids and per-owner counters.
	kindReplay
	kindReplayOwner
)

// redisTag is the kind's segment in a Redis key.
func (k kind) redisTag() string {
	switch k {
	case kindOnce:
		return "once:"
	case kindRate:
		return "rl:"
	case kindHold:
		return "hold:"
	case kindReplay, kindReplayOwner:
		return "replay:"
	default:
		return "kv:"
	}
}

// digest hashes a caller key. Keys may come from hostile input (subjects,
// nonces, tool names), so they are never stored verbatim: the digest bounds
// their size and keeps identities out of Redis in clear text.
func digest(key string) [sha256.Size]byte {
	return sha256.Sum256([]byte(key))
}

// redisKey builds the bounded Redis key prefix + kind + base64url(sha256(key)).
func redisKey(prefix string, k kind, key string) string {
	sum := digest(key)
	tag := k.redisTag()
	buf := make([]byte, 0, len(prefix)+len(tag)+base64.RawURLEncoding.EncodedLen(len(sum)))
	buf = append(buf, prefix...)
	buf = append(buf, tag...)
	buf = base64.RawURLEncoding.AppendEncode(buf, sum[:])
	return string(buf)
}

// b64Digest is the base64url digest of key, the hashed part of a Redis key.
func b64Digest(key string) string {
	sum := digest(key)
	return base64.RawURLEncoding.EncodeToString(sum[:])
}
