package store

import (
	"bytes"
	"context"
)

// swapScript is Swap. KEYS: the value's key. ARGV: old, value, "1" to remove the key instead.
// Returns 1 when the key holds value afterwards: swapped now, or by this call's earlier
// attempt (a resend, see Store.SetNX); removing, when the key no longer holds old. SET …
// KEEPTTL keeps the expiry the key had (Redis 6.0 or later).
const swapScript = `
local cur = redis.call('GET', KEYS[1])
if ARGV[3] == '1' then
  if not cur then return 1 end
  if cur ~= ARGV[1] then return 0 end
  redis.call('DEL', KEYS[1])
  return 1
end
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
	remove := "0"
	if value == nil {
		remove = "1"
	}
	n, err := r.swap.Run(ctx, r.client, []string{redisKey(r.prefix, kindValue, key)}, old, value, remove).Int64()
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
		case value == nil:
			// Compare-and-delete: old is gone once the key holds something else or nothing.
			swapped = !ok || e.expires <= now || bytes.Equal(e.value, old)
			if ok && swapped {
				sh.del(k)
			}
			return nil
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
