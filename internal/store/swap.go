package store

import (
	"bytes"
	"context"
)

// swapScript is Swap. KEYS: the value's key. ARGV: old, value. Returns 1 when the key holds
// value afterwards: swapped now, or by this call's earlier attempt (a resend, see Store.SetNX).
// SET … KEEPTTL keeps the expiry the key had (Redis 6.0 or later).
const swapScript = `
local cur = redis.call('GET', KEYS[1])
if cur == ARGV[2] then return 1 end
if cur ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
return 1
`

// Swap implements Store with one script, so that the comparison and the write are one step
// on the key's node.
func (r *Redis) Swap(ctx context.Context, key string, old, value []byte) (bool, error) {
	probe, err := r.admit()
	if err != nil {
		return false, err
	}
	n, err := r.swap.Run(ctx, r.client, []string{redisKey(r.prefix, kindValue, key)}, old, value).Int64()
	if err = r.done(probe, err); err != nil {
		return false, err
	}
	return n == 1, nil
}

// Swap implements Store. The value keeps its expiry and counts against MaxValueBytes with its
// new size.
func (m *Memory) Swap(_ context.Context, key string, old, value []byte) (bool, error) {
	k := memKey{kind: kindValue, sum: digest(key)}
	v := append([]byte(nil), value...)
	var swapped bool
	err := m.retryFull(func() error {
		sh, now, err := m.lock(k)
		if err != nil {
			return err
		}
		defer sh.mu.Unlock()
		e, ok := sh.entries[k]
		switch {
		case !ok || e.expires <= now:
			return nil
		case bytes.Equal(e.value, value):
			swapped = true
			return nil
		case !bytes.Equal(e.value, old):
			return nil
		}
		e.value = v
		if err := m.put(sh, k, e, now); err != nil {
			return err
		}
		swapped = true
		return nil
	})
	if err != nil {
		return false, err
	}
	return swapped, nil
}
