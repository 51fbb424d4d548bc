package gateway

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
)

// TestDPoPReplayReadsEpochWithRecord: the replay store DPoP is given reads the epoch marker with
// each record (authz.ReplaySince), on Redis and on the memory store, so a proof costs one round
// trip; what it reads is the guard's record of when the store's memory began.
func TestDPoPReplayReadsEpochWithRecord(t *testing.T) {
	rs := testredis.Start(t)
	for name, url := range map[string]string{"redis": rs.URL(), "memory": ""} {
		t.Run(name, func(t *testing.T) {
			cfg := newConfig()
			cfg.Redis.URL = url
			g := &gateway{registry: prometheus.NewRegistry(), log: slog.New(slog.NewTextHandler(io.Discard, nil)), getenv: func(string) string { return "" }}
			var err error
			if g.rec, err = newRecorder(&cfg, g.registry); err != nil {
				t.Fatal(err)
			}
			if err := g.buildState(&cfg, g.getenv, g.log); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = g.store.Close() })
			since, ok := g.replay.(authz.ReplaySince)
			if !ok {
				t.Fatalf("the DPoP replay store %T does not read the epoch with the record", g.replay)
			}
			ctx := context.Background()
			want, err := g.replays.Began(ctx)
			if err != nil {
				t.Fatal(err)
			}
			u, began, err := since.FirstUseSince(ctx, "iss#alice", "jkt.j1", time.Minute, store.ReplayBudget{Count: 5, Window: time.Minute})
			if err != nil || u != store.UseFirst || !began.Equal(want) {
				t.Fatalf("FirstUseSince = %v %v %v, want a first use and the memory's beginning %v", u, began, err, want)
			}
			if u, _, err := since.FirstUseSince(ctx, "iss#alice", "jkt.j1", time.Minute, store.ReplayBudget{Count: 5, Window: time.Minute}); err != nil || u != store.UseAgain {
				t.Fatalf("replay: %v %v", u, err)
			}
		})
	}
}
