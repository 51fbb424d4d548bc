package gateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/metrics"
)

// listChangedTopic is the shared store's topic on which replicas pass on list_changed.
const listChangedTopic = "list-changed"

// noticeTimeout bounds passing one list_changed on. It runs on the backend listen stream's
// goroutine before the stream's own subscribers hear the notification, so that a client that
// lists again on hearing it, through any replica, finds that replica's cache already dropped.
const noticeTimeout = time.Second

// listChangedRelay passes the list_changed notifications this replica's listen streams hear to
// every other replica through the shared store, and applies theirs here: each replica caches
// backend lists on its own, and the notification invalidates every copy (docs/protocol.md §5.1), not
// only the copy of the replica the listen happens to run through. Delivery is best effort (a
// replica cut off from Redis misses notices); the backend's ttlMs still bounds every entry.
type listChangedRelay struct {
	notices store.Notices
	self    string // this replica's id: its own notices come back to it and are skipped
	apply   func(upstream, method string) int
	rec     *metrics.Recorder
	log     *slog.Logger
}

// listChangedNotice is one notice on listChangedTopic.
type listChangedNotice struct {
	Replica  string `json:"replica"`
	Upstream string `json:"upstream"`
	Method   string `json:"method"`
}

func newListChangedRelay(n store.Notices, rec *metrics.Recorder, log *slog.Logger) *listChangedRelay {
	var id [16]byte
	_, _ = rand.Read(id[:]) // crypto/rand.Read never fails
	return &listChangedRelay{notices: n, self: hex.EncodeToString(id[:]), rec: rec, log: log}
}

// onListChanged is the hook for upstreams.Options.OnListChanged: nil without a relay.
func (l *listChangedRelay) onListChanged() func(upstream, method string) {
	if l == nil {
		return nil
	}
	return l.publish
}

// publish passes a list_changed on; the Registry has dropped its own copies already.
func (l *listChangedRelay) publish(upstream, method string) {
	msg, err := json.Marshal(listChangedNotice{Replica: l.self, Upstream: upstream, Method: method})
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), noticeTimeout)
	defer cancel()
	if err := l.notices.Publish(ctx, listChangedTopic, msg); err != nil {
		l.rec.RedisError(metrics.RedisOpNotice)
		l.log.Warn("could not tell the other replicas of a list change; their cached lists stay until their ttlMs",
			"upstream", upstream, "method", method, "error", err)
	}
}

// run applies the other replicas' notices until ctx ends.
func (l *listChangedRelay) run(ctx context.Context) {
	l.notices.Subscribe(ctx, listChangedTopic, l.receive)
}

func (l *listChangedRelay) receive(msg []byte) {
	var n listChangedNotice
	if err := json.Unmarshal(msg, &n); err != nil || n.Replica == "" {
		l.log.Warn("ignored a malformed list-change notice from the shared store", "bytes", len(msg))
		return
	}
	if n.Replica == l.self {
		return
	}
	dropped := l.apply(n.Upstream, n.Method)
	l.log.Debug("another replica saw a list change", "upstream", n.Upstream, "method", n.Method, "dropped", dropped)
}
