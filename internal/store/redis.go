package store

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// gcraScript is gcra.step run atomically next to the bucket, so that replicas
// never interleave a read and a write of the same key. KEYS: the bucket and, optionally, this
// charge's marker (ratecharge.go). ARGV: interval (µs), burst, now (µs, or 0 to use the
// server's TIME so that every replica reads one clock per key), the marker's life (ms).
// Returns {allowed, remaining, retryAfter µs, resetAfter µs}; a copy of a charge that finds its
// marker returns the marker's answer and charges nothing. Calling TIME before a write needs
// effect replication, the default since Redis 5.
const gcraScript = chargeLua + `
local again = seen()
if again then return again end
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
if now <= 0 then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local tat = tonumber(redis.call('GET', KEYS[1])) or 0
if tat < now then tat = now end
local newtat = tat + interval
local allowat = newtat - burst * interval
if now < allowat then
  return {0, 0, allowat - now, tat - now}
end
redis.call('SET', KEYS[1], string.format('%d', newtat), 'PX', math.ceil((newtat - now) / 1000))
return charged({1, math.floor((now - allowat) / interval), 0, newtat - now}, ARGV[4])
`

// RedisOption adjusts a Redis store beyond its configuration.
type RedisOption func(*Redis)

// WithClock makes Allow use now instead of the Redis server's TIME. Every
// replica sharing a Redis must then use comparable clocks; tests use it to
// move rate-limit refill forward without sleeping. UseOnce and Set expiry
// always run on the server's clock.
func WithClock(now func() time.Time) RedisOption {
	return func(r *Redis) { r.now = now }
}

// WithBreakerHook calls fn on every change of the circuit breaker's state (see RedisBreaker),
// for a log line. fn runs under the breaker's lock and must not block or use the store.
func WithBreakerHook(fn func(BreakerState)) RedisOption {
	return func(r *Redis) { r.onBreaker = fn }
}

// Redis is the Store shared by all replicas through a Redis server, Sentinel
// group or Cluster. Keys are prefix + kind + SHA-256 of the caller's key.
type Redis struct {
	client redis.UniversalClient
	prefix string
	now    func() time.Time
	gcra   *redis.Script
	lease  *redis.Script
	// hold and release keep hold budgets (hold.go).
	hold, release *redis.Script
	// recGet, recPut, recSwap, recDelete, recAdopt and the others are the scripts of Records
	// (records_redis.go).
	recGet, recTouch, recPut, recSwap, recDelete, recAdopt, recIndex, recCount *redis.Script
	// swap is Swap (swap.go).
	swap *redis.Script
	// replay records single-use ids per owner (replay.go).
	replay *redis.Script
	// replayGet is replayScript with a read of one more key (FirstUseGet).
	replayGet *redis.Script
	// replayOnce is replayScript that also claims a single-use key (FirstUseOnce).
	replayOnce *redis.Script
	closed     atomic.Bool
	// brk skips Redis while it is failing, so that a hanging Redis costs each request nothing
	// rather than a timeout (see RedisBreaker).
	brk       *breaker
	onBreaker func(BreakerState)
	// waitReplicas > 0 makes UseOnce wait for that many replicas (see RedisConfig.WaitReplicas).
	waitReplicas int
	waitTimeout  time.Duration
	// noticeCheck is noticeCheckEvery unless a test shortens it.
	noticeCheck time.Duration
	// unconfirmed counts the notice subscriptions Redis has not confirmed since they were
	// made or their connection last failed (Subscribed).
	unconfirmed atomic.Int64
	// tokenBase and tokenSeq make each single-use write's token (token).
	tokenBase string
	tokenSeq  atomic.Uint64
	// charges marks rate-limit charges (ratecharge.go).
	charges chargeMarks
	// beforeUnindex, when set (tests only), runs in DeleteRecord after the record went and
	// before its index entry does: tests land another replica's write there.
	beforeUnindex func()
}

var _ Store = (*Redis)(nil)

// ErrNotConfigured means NewRedis got a config with neither URL nor Addrs.
var ErrNotConfigured = errors.New("store: redis url or addrs required")

// NewRedis builds a Redis store from cfg. It does not dial: the client
// connects lazily and reconnects by itself, so a Redis that is down at
// start-up shows in Ping (readiness) rather than failing the process.
func NewRedis(cfg RedisConfig, opts ...RedisOption) (*Redis, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if !cfg.Enabled() {
		return nil, ErrNotConfigured
	}
	uo, err := cfg.universalOptions()
	if err != nil {
		return nil, err
	}
	r := &Redis{
		client: redis.NewUniversalClient(uo),
		prefix: cfg.KeyPrefixOrDefault(),
		gcra:   redis.NewScript(gcraScript),
		lease:  redis.NewScript(leaseScript),
		hold:   redis.NewScript(holdScript),

		release:    redis.NewScript(releaseScript),
		replay:     redis.NewScript(replayScript),
		replayGet:  redis.NewScript(replayGetScript),
		replayOnce: redis.NewScript(replayOnceScript),

		recGet:    redis.NewScript(recGetScript),
		recTouch:  redis.NewScript(recTouchScript),
		recAdopt:  redis.NewScript(recAdoptScript),
		recPut:    redis.NewScript(recPutScript),
		recSwap:   redis.NewScript(recSwapScript),
		recDelete: redis.NewScript(recDeleteScript),
		recIndex:  redis.NewScript(recIndexScript),
		recCount:  redis.NewScript(recCountScript),
		swap:      redis.NewScript(swapScript),

		waitReplicas: cfg.WaitReplicas,
		waitTimeout:  orDefault(cfg.WaitTimeout, DefaultWaitTimeout),
		tokenBase:    rand.Text(),
		noticeCheck:  noticeCheckEvery,
	}
	for _, opt := range opts {
		opt(r)
	}
	r.brk = newBreaker(cfg.Breaker, nil, r.onBreaker)
	_, cluster := r.client.(*redis.ClusterClient)
	r.charges = chargeMarks{prefix: r.prefix, ttl: chargeWindow(r.client), cluster: cluster}
	return r, nil
}

// token is a value no other call of any replica writes: what a single-use write stores, so
// that it can tell its own record from another's. go-redis sends a command again when the
// answer to its first attempt timed out (RedisConfig.MaxRetries), and a Redis that stalled
// longer than the read timeout (paused, a slow fork, a long script) runs both attempts once it
// wakes: the first records the use, and the second, finding a record, would answer a first use
// as a replay. The second attempt finds its own token instead and answers a first use.
func (r *Redis) token() string {
	return r.tokenBase + strconv.FormatUint(r.tokenSeq.Add(1), 36)
}

// onceArgs is UseOnce's SET: only when the key is missing, holding token, answering what the
// key held before.
func onceArgs(ttl time.Duration) redis.SetArgs {
	return redis.SetArgs{Mode: "NX", Get: true, TTL: ceilMillis(ttl)}
}

// onceFirst reads the answer of a SET with onceArgs: whether token's call recorded the key.
func onceFirst(set *redis.StatusCmd, token string) (bool, error) {
	old, err := set.Result()
	if errors.Is(err, redis.Nil) {
		return true, nil
	}
	return err == nil && old == token, err
}

// UseOnce implements Store with SET NX GET PX, writing a token (see token).
func (r *Redis) UseOnce(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	if ttl <= 0 {
		return false, ErrInvalidTTL
	}
	probe, err := r.admit()
	if err != nil {
		return false, err
	}
	k := redisKey(r.prefix, kindOnce, key)
	if r.waitReplicas > 0 {
		return r.useOnceAcked(ctx, probe, k, ttl)
	}
	tok := r.token()
	first, err := onceFirst(r.client.SetArgs(ctx, k, tok, onceArgs(ttl)), tok)
	if err = r.done(probe, err); err != nil {
		return false, err
	}
	return first, nil
}

// ErrNotReplicated means a single-use key was written on the primary but fewer replicas than
// RedisConfig.WaitReplicas acknowledged it within WaitTimeout: a failover now could lose it, so
// the use is refused (fail closed). It always comes wrapped together with ErrUnavailable.
var ErrNotReplicated = errors.New("store: single-use key not acknowledged by enough replicas")

// useOnceAcked is UseOnce with WAIT: SET NX and WAIT go down one connection in one pipeline
// (WAIT counts the acknowledgements of that connection's writes), on the key's primary. A
// first use counts only once waitReplicas replicas hold it. When they do not, the key is
// deleted again, best effort, so that the refused use does not burn the nonce: nothing acted
// on it, and the caller may retry once replication is back.
func (r *Redis) useOnceAcked(ctx context.Context, probe bool, key string, ttl time.Duration) (bool, error) {
	var c redis.Cmdable = r.client
	if cc, ok := r.client.(*redis.ClusterClient); ok {
		node, err := cc.MasterForKey(ctx, key)
		if err != nil {
			return false, r.done(probe, err)
		}
		c = node
	}
	tok := r.token()
	var set *redis.StatusCmd
	var wait *redis.Cmd
	_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		set = p.SetArgs(ctx, key, tok, onceArgs(ttl))
		// WAIT through Do: Pipeliner has no Wait method. The pipeline's read deadline is
		// ReadTimeout, which Validate keeps above WaitTimeout.
		wait = p.Do(ctx, "wait", r.waitReplicas, r.waitTimeout.Milliseconds())
		return nil
	})
	if errors.Is(err, redis.Nil) {
		err = nil // the key was missing: a first use; WAIT's own error is read below
	}
	written, setErr := onceFirst(set, tok)
	if setErr == nil && !written {
		r.brk.done(probe, outcomeOK)
		return false, nil // already used: no acknowledgement needed to refuse
	}
	// Whatever fails from here on, a key this call wrote is released: the use is refused.
	release := func() {
		if written {
			takeBack(ctx, c, tok, key)
		}
	}
	if err = r.done(probe, err); err != nil {
		release()
		return false, err
	}
	acked, err := wait.Int64()
	if err != nil {
		release()
		return false, r.wrap(err)
	}
	if acked < int64(r.waitReplicas) {
		release()
		return false, fmt.Errorf("%w: %w: %d of %d replicas within %v", ErrUnavailable, ErrNotReplicated,
			acked, r.waitReplicas, r.waitTimeout)
	}
	return true, nil
}

// takeBackScript deletes each of KEYS that holds ARGV[1], a call's token (Redis.token).
const takeBackScript = `
local n = 0
for _, k in ipairs(KEYS) do
  if redis.call('GET', k) == ARGV[1] then n = n + redis.call('DEL', k) end
end
return n
`

// takeBack releases the single-use keys a refused use wrote, best effort: only those that
// still hold its token. A plain DEL that the client sent again (its reply timed out) could run
// after another writer had claimed the released key, deleting that writer's claim: the nonce
// it consumed could then be used once more.
func takeBack(ctx context.Context, c redis.Scripter, token string, keys ...string) {
	_ = c.Eval(context.WithoutCancel(ctx), takeBackScript, keys, token).Err()
}

// Allow implements Store with one Lua script (EVALSHA, falling back to EVAL
// when the server's script cache is empty, e.g. after a restart).
func (r *Redis) Allow(ctx context.Context, key string, limit Limit) (RateDecision, error) {
	g, err := newGCRA(limit)
	if err != nil {
		return RateDecision{}, err
	}
	var now int64
	if r.now != nil {
		now = r.now().UnixMicro()
	}
	probe, err := r.admit()
	if err != nil {
		return RateDecision{}, err
	}
	vals, err := r.gcra.Run(ctx, r.client, r.charges.keys(key, r.token),
		g.interval, g.burst, now, r.charges.ttl.Milliseconds()).Int64Slice()
	if err = r.done(probe, err); err != nil {
		return RateDecision{}, err
	}
	if len(vals) != 4 {
		return RateDecision{}, fmt.Errorf("%w: rate script returned %d values, want 4", ErrUnavailable, len(vals))
	}
	res := gcraResult{allowed: vals[0] == 1, remaining: vals[1], retryAfter: vals[2], resetAfter: vals[3]}
	return res.decision(limit), nil
}

// Get implements Store.
func (r *Redis) Get(ctx context.Context, key string) ([]byte, bool, error) {
	probe, err := r.admit()
	if err != nil {
		return nil, false, err
	}
	b, err := r.client.Get(ctx, redisKey(r.prefix, kindValue, key)).Bytes()
	if errors.Is(err, redis.Nil) {
		r.brk.done(probe, outcomeOK)
		return nil, false, nil
	}
	if err = r.done(probe, err); err != nil {
		return nil, false, err
	}
	return b, true, nil
}

// Set implements Store.
func (r *Redis) Set(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if ttl <= 0 {
		return ErrInvalidTTL
	}
	probe, err := r.admit()
	if err != nil {
		return err
	}
	return r.done(probe, r.client.Set(ctx, redisKey(r.prefix, kindValue, key), value, ceilMillis(ttl)).Err())
}

// SetNX implements Store with one SET … NX GET (Redis 7.0 or later), so the
// value stored and the value read are the same command's.
func (r *Redis) SetNX(ctx context.Context, key string, value []byte, ttl time.Duration) (bool, []byte, error) {
	if ttl < 0 {
		return false, nil, ErrInvalidTTL
	}
	probe, err := r.admit()
	if err != nil {
		return false, nil, err
	}
	args := redis.SetArgs{Mode: "NX", Get: true}
	if ttl > 0 {
		args.TTL = ceilMillis(ttl)
	}
	old, err := r.client.SetArgs(ctx, redisKey(r.prefix, kindValue, key), value, args).Bytes()
	if errors.Is(err, redis.Nil) {
		r.brk.done(probe, outcomeOK)
		return true, nil, nil
	}
	if err = r.done(probe, err); err != nil {
		return false, nil, err
	}
	if bytes.Equal(old, value) {
		return true, nil, nil // this call's earlier attempt stored it (see token)
	}
	return false, old, nil
}

// Ping implements Store.
func (r *Redis) Ping(ctx context.Context) error {
	probe, err := r.admit()
	if err != nil {
		return err
	}
	return r.done(probe, r.client.Ping(ctx).Err())
}

// BreakerState reports the state of the circuit breaker in front of Redis.
func (r *Redis) BreakerState() BreakerState { return r.brk.current() }

// Skipped reports how many commands the circuit breaker answered without sending them.
func (r *Redis) Skipped() uint64 { return r.brk.skipped.Load() }

// admit asks the breaker whether a command may go to Redis; a skipped command fails at once
// with ErrSkipped (and ErrUnavailable). probe is passed on to done.
func (r *Redis) admit() (probe bool, err error) {
	if r.closed.Load() {
		return false, errClosed()
	}
	ok, probe := r.brk.admit()
	if !ok {
		return false, fmt.Errorf("%w: %w", ErrUnavailable, ErrSkipped)
	}
	return probe, nil
}

// done reports a command's outcome to the breaker and wraps its error.
func (r *Redis) done(probe bool, err error) error {
	r.brk.done(probe, classify(err))
	return r.wrap(err)
}

// Close implements Store; it closes the connection pool. Closing twice is a
// no-op.
func (r *Redis) Close() error {
	if r.closed.Swap(true) {
		return nil
	}
	return r.client.Close()
}

// wrap marks every client failure as ErrUnavailable, keeping the cause.
func (r *Redis) wrap(err error) error {
	if err == nil {
		return nil
	}
	if r.closed.Load() {
		return fmt.Errorf("%w: %w: %w", ErrUnavailable, ErrClosed, err)
	}
	return fmt.Errorf("%w: %w", ErrUnavailable, err)
}

// ceilMillis rounds a positive TTL up to Redis's millisecond resolution, so
// that a nonce never expires earlier than asked.
func ceilMillis(d time.Duration) time.Duration {
	return (d + time.Millisecond - 1).Truncate(time.Millisecond)
}
