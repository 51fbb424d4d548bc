package gateway

import (
	"context"
	"errors"
	"time"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/metrics"
	"github.com/mcp-gateway/gateway/mrtr"
)

// epochReplay is the replay store of DPoP proofs' jti with the epoch guard's marker read in the
// same round trip as each record (authz.ReplaySince): a proof costs Redis one round trip, and
// one used before the store lost its memory is still refused.
type epochReplay struct {
	authz.ReplayCache // FirstUse and BudgetReset, counted when on Redis
	get               store.ReplayGetter
	guard             *mrtr.EpochGuard
	rec               *metrics.Recorder
	counted           bool // the store is Redis: failures are counted as the nonce operation's
}

// FirstUseSince implements authz.ReplaySince. The marker is parsed only for a first use; a
// missing or unreadable one is written (the guard's slow path: a new or emptied store).
func (e epochReplay) FirstUseSince(ctx context.Context, owner, id string, ttl time.Duration, b store.ReplayBudget) (store.Use, time.Time, error) {
	u, v, found, err := e.get.FirstUseGet(ctx, owner, id, ttl, b, e.guard.MarkerKey())
	if e.counted && errors.Is(err, store.ErrUnavailable) {
		e.rec.RedisError(metrics.RedisOpNonce)
	}
	if err != nil || u != store.UseFirst {
		return u, time.Time{}, err
	}
	began, err := e.guard.Since(ctx, v, found)
	return u, began, err
}
