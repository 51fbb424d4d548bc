package gateway

import (
	"context"
	"sync/atomic"
)

// versionGate asks Redis whether it is new enough for the gateway (store.MinRedisVersion), from
// the readiness check, until one answer says it is: an older Redis answers PING and plain
// reads, so without it a replica would be ready and then fail every confirmation, pin record
// and vault write with an error only its log explains.
type versionGate struct {
	check func(context.Context) error
	ok    atomic.Bool
}

// run returns nil once Redis was found new enough (nil gate: no Redis), else asks again.
func (v *versionGate) run(ctx context.Context) error {
	if v == nil || v.ok.Load() {
		return nil
	}
	if err := v.check(ctx); err != nil {
		return err
	}
	v.ok.Store(true)
	return nil
}
