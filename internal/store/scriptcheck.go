package store

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// ScriptChecker is a store that can say whether its server runs scripts for the gateway.
type ScriptChecker interface {
	// CheckScripts returns nil when every server the store writes to runs a script for the
	// store's user, else the error of asking: NOPERM from an ACL that does not grant EVALSHA
	// and EVAL, which the rate limits, hold budgets, replay records and vault records all run.
	CheckScripts(ctx context.Context) error
}

var _ ScriptChecker = (*Redis)(nil)

// probeScript touches no key: it asks only whether the user may run scripts at all. Keys under
// the prefix are the readiness check's other steps'.
const probeScript = "return 1"

// CheckScripts implements ScriptChecker as the store runs its scripts (EVALSHA, then EVAL when
// the server does not have the script yet), on the server the client writes to (every primary
// of a Cluster). A refusal is an answer: it does not count against the circuit breaker.
func (r *Redis) CheckScripts(ctx context.Context) error {
	probe, err := r.admit()
	if err != nil {
		return err
	}
	script := redis.NewScript(probeScript)
	run := func(ctx context.Context, c redis.Scripter) error { return script.Run(ctx, c, nil).Err() }
	if cc, ok := r.client.(*redis.ClusterClient); ok {
		err = cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error { return run(ctx, c) })
	} else {
		err = run(ctx, r.client)
	}
	if err = r.done(probe, err); err != nil {
		return fmt.Errorf("running a script: %w", err)
	}
	return nil
}
