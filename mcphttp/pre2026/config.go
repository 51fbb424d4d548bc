package pre2026

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcp-gateway/gateway/internal/configerr"
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
)

// DefaultLegacyVersions are the pre-2026 revisions served at the edge, newest first.
func DefaultLegacyVersions() []string { return []string{"2025-11-25", "2025-06-18"} }

// Config is the `legacy:` block: pre-2026 clients (2025-11-25, 2025-06-18) served at the edge,
// on the same endpoint as 2026-07-28 clients, by translating each of their requests into a
// 2026-07-28 one (docs/protocol.md §9). Enabled off builds no edge: such clients are refused,
// naming the versions served. The configuration the gateway starts from turns it on.
type Config struct {
	// Enabled serves pre-2026 clients. False: they are refused with -32022, naming the
	// versions the gateway speaks.
	Enabled bool `yaml:"enabled"`
	// Versions are the pre-2026 revisions negotiated at initialize, newest first: a client
	// asking for another gets the first. Default DefaultLegacyVersions.
	Versions []string `yaml:"versions"`
	// SessionTTL is how long a sealed session id opens. Default DefaultLegacySessionTTL.
	SessionTTL time.Duration `yaml:"sessionTTL"`
	// RequireSession refuses (400) a pre-2026 request that carries a version header but no
	// session id. Default false: some hosts never echo the session id.
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
}

// servedLegacyVersions are the revisions the edge can translate; Versions must name only these.
var servedLegacyVersions = []string{"2025-11-25", "2025-06-18"}

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
	return c
}

// Validate reports every problem in c (with its defaults applied).
func (c Config) Validate() error {
	var errs []error
	for i, v := range c.Versions {
		if !slices.Contains(servedLegacyVersions, v) {
			errs = append(errs, configerr.At(fmt.Sprintf("legacy.versions[%d]", i), "%q is not a served pre-2026 version: want one of %s",
				v, strings.Join(servedLegacyVersions, ", ")))
		}
	}
	for _, f := range []struct {
		key string
		neg bool
	}{{"sessionTTL", c.SessionTTL < 0}, {"askTimeout", c.AskTimeout < 0}, {"maxRounds", c.MaxRounds < 0},
		{"maxPendingPerSession", c.MaxPendingPerSession < 0}, {"maxPendingPerCaller", c.MaxPendingPerCaller < 0}} {
		if f.neg {
			errs = append(errs, configerr.At("legacy."+f.key, "must not be negative"))
		}
	}
	return errors.Join(errs...)
}
