package pre2026

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcp-gateway/gateway/internal/configerr"
	"github.com/mcp-gateway/gateway/internal/era"
	"github.com/mcp-gateway/gateway/upstreams"
)

// Defaults for Config, used once Enabled is set (docs/protocol.md §9).
const (
	// DefaultLegacySessionTTL is how long a legacy session id opens: a working day and more, as
	// clients re-initialize only when told their session is gone.
	DefaultLegacySessionTTL = 24 * time.Hour
	// DefaultLegacyAskTimeout bounds one round's wait for a legacy client's answers to the
	// requests the gateway sent it: the lifetime of a requestState.
	DefaultLegacyAskTimeout = 10 * time.Minute
	// DefaultLegacyMaxRounds bounds the input rounds of one legacy call, as the go-sdk does.
	DefaultLegacyMaxRounds = 10
	// DefaultLegacyMaxPendingPerSession bounds the requests waiting for one session's answers.
	DefaultLegacyMaxPendingPerSession = 8
	// DefaultLegacyMaxPendingPerCaller bounds the requests waiting for the answers of all of
	// one caller's sessions, on one replica.
	DefaultLegacyMaxPendingPerCaller = 32
	// DefaultMaxBatchMessages bounds the messages of one JSON-RPC batch (2025-03-26 only).
	DefaultMaxBatchMessages = 32
	// DefaultMaxBatchBytes bounds the body of one JSON-RPC batch.
	DefaultMaxBatchBytes = 1 << 20
	// DefaultBatchConcurrency is how many messages of one batch are served at once.
	DefaultBatchConcurrency = 4
	// DefaultBatchTimeout bounds a whole batch: the default timeout of one backend call
	// (upstreams.DefaultTimeout, the very constant, so the two cannot drift apart), so that a
	// batch takes no longer than one call to a backend that hangs.
	DefaultBatchTimeout = upstreams.DefaultTimeout
	// MaxBatchMessagesLimit is the largest MaxBatchMessages accepted: every message of a batch
	// is served as if sent alone, so a batch is never a way around the per-caller bounds.
	MaxBatchMessagesLimit = 1000
)

// DefaultLegacyVersions are the pre-2026 revisions served at the edge, newest first.
func DefaultLegacyVersions() []string {
	vs := era.LegacyVersions()
	return vs[:]
}

// Config is the `legacy:` block: pre-2026 clients (2025-11-25, 2025-06-18, 2025-03-26) served at the edge,
// on the same endpoint as 2026-07-28 clients, by translating each of their requests into a
// 2026-07-28 one (docs/protocol.md §9). Enabled off builds no edge: such clients are refused,
// naming the versions served. The configuration the gateway starts from turns it on.
type Config struct {
	// Enabled serves pre-2026 clients. False: they are refused with -32022, naming the
	// versions the gateway speaks.
	Enabled bool `yaml:"enabled"`
	// Versions are the pre-2026 revisions negotiated at initialize, newest first: a client
	// asking for another revision gets the newest of them not newer than it, or the oldest when
	// it asked for an older one (2024-11-05); one asking for something else gets the first. With 2025-03-26 among them, a request with neither a session id nor an
	// MCP-Protocol-Version header is served as a session-less 2025-03-26 one, and sessions at
	// 2025-03-26 may send JSON-RPC batches. Default DefaultLegacyVersions.
	Versions []string `yaml:"versions"`
	// SessionTTL is how long a sealed session id opens. Default DefaultLegacySessionTTL.
	SessionTTL time.Duration `yaml:"sessionTTL"`
	// RequireSession refuses (400) a pre-2026 request that carries no session id (with a
	// version header, or, 2025-03-26 being served, with none). Default false: some hosts never
	// echo the session id.
	RequireSession bool `yaml:"requireSession"`
	// GetStream answers GET with a valid session with an SSE stream of list_changed
	// notifications; false answers 405.
	GetStream bool `yaml:"getStream"`
	// AskTimeout bounds the wait for one round of a client's answers to elicitation,
	// sampling or roots requests. Default DefaultLegacyAskTimeout.
	AskTimeout time.Duration `yaml:"askTimeout" was:"bridgeTimeout"`
	// MaxRounds bounds the input rounds of one call. Default DefaultLegacyMaxRounds.
	MaxRounds int `yaml:"maxRounds"`
	// MaxPendingPerSession bounds the requests of one session waiting for its answers.
	// Default DefaultLegacyMaxPendingPerSession.
	MaxPendingPerSession int `yaml:"maxPendingPerSession"`
	// MaxPendingPerCaller bounds the requests of all of one caller's sessions waiting for
	// their answers, on one replica. Default DefaultLegacyMaxPendingPerCaller.
	MaxPendingPerCaller int `yaml:"maxPendingPerCaller"`
	// MaxBatchMessages bounds the messages of one JSON-RPC batch of a 2025-03-26 session; a
	// larger batch is refused whole with 413. Each message is admitted (in-flight slots, rate
	// limit) as if sent alone. Default DefaultMaxBatchMessages, at most MaxBatchMessagesLimit.
	MaxBatchMessages int `yaml:"maxBatchMessages"`
	// MaxBatchBytes bounds the body of one JSON-RPC batch, in bytes, below server.maxBodyBytes
	// (which bounds every body); a larger batch is refused whole with 413. Default
	// DefaultMaxBatchBytes.
	MaxBatchBytes int64 `yaml:"maxBatchBytes"`
	// BatchConcurrency is how many messages of one batch are served at once; the others wait
	// for a turn. Default DefaultBatchConcurrency.
	BatchConcurrency int `yaml:"batchConcurrency"`
	// BatchTimeout bounds a whole batch, from its start to its last answer: a message whose
	// turn has not come by then is answered with an error and never sent to a backend, and
	// one still running is cut, its backend call cancelled, and answered with a timeout error.
	// Default DefaultBatchTimeout (the default upstreams[].timeout): raise it with the
	// timeouts of backends whose calls take longer.
	BatchTimeout time.Duration `yaml:"batchTimeout"`
}

// WithDefaults returns c with zero fields set to their defaults; Enabled and the booleans are
// left as they are.
func (c Config) WithDefaults() Config {
	if len(c.Versions) == 0 {
		c.Versions = DefaultLegacyVersions()
	}
	if c.SessionTTL == 0 {
		c.SessionTTL = DefaultLegacySessionTTL
	}
	if c.AskTimeout == 0 {
		c.AskTimeout = DefaultLegacyAskTimeout
	}
	if c.MaxRounds == 0 {
		c.MaxRounds = DefaultLegacyMaxRounds
	}
	if c.MaxPendingPerSession == 0 {
		c.MaxPendingPerSession = DefaultLegacyMaxPendingPerSession
	}
	if c.MaxPendingPerCaller == 0 {
		c.MaxPendingPerCaller = DefaultLegacyMaxPendingPerCaller
	}
	if c.MaxBatchMessages == 0 {
		c.MaxBatchMessages = DefaultMaxBatchMessages
	}
	if c.MaxBatchBytes == 0 {
		c.MaxBatchBytes = DefaultMaxBatchBytes
	}
	if c.BatchConcurrency == 0 {
		c.BatchConcurrency = DefaultBatchConcurrency
	}
	if c.BatchTimeout == 0 {
		c.BatchTimeout = DefaultBatchTimeout
	}
	return c
}

// Validate reports every problem in c (with its defaults applied).
func (c Config) Validate() error {
	var errs []error
	for i, v := range c.Versions {
		if !era.IsLegacyVersion(v) {
			errs = append(errs, configerr.At(fmt.Sprintf("legacy.versions[%d]", i), "%q is not a served pre-2026 version: want one of %s",
				v, strings.Join(DefaultLegacyVersions(), ", ")))
		}
	}
	for _, f := range []struct {
		key string
		neg bool
	}{{"sessionTTL", c.SessionTTL < 0}, {"askTimeout", c.AskTimeout < 0}, {"maxRounds", c.MaxRounds < 0},
		{"maxPendingPerSession", c.MaxPendingPerSession < 0}, {"maxPendingPerCaller", c.MaxPendingPerCaller < 0},
		{"maxBatchMessages", c.MaxBatchMessages < 0}, {"maxBatchBytes", c.MaxBatchBytes < 0},
		{"batchConcurrency", c.BatchConcurrency < 0}, {"batchTimeout", c.BatchTimeout < 0}} {
		if f.neg {
			errs = append(errs, configerr.At("legacy."+f.key, "must not be negative"))
		}
	}
	if c.MaxBatchMessages > MaxBatchMessagesLimit {
		errs = append(errs, configerr.At("legacy.maxBatchMessages", "must be at most %d", MaxBatchMessagesLimit))
	}
	return errors.Join(errs...)
}
