package mcphttp

import (
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-gateway/gateway/internal/configerr"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/seal"
)

// Error shapes of MCP drafts, behind server.draftErrors (docs/denials.md). Each is a change of
// what a refused or limited client receives, never of what is refused or limited: with the
// switch off every answer is the one the gateway has always given, byte for byte, and on it
// the same decision is expressed as the draft says.

// The values of server.draftErrors.
const (
	// DraftDenials: authorization denials carry SEP-2643's envelope in the result's _meta, and a
	// refused tools/call is a failed tool call carrying it (denials.go).
	DraftDenials = "denials"
	// DraftRateLimited: a caller over one of its limits gets SEP-3304's RateLimited error,
	// -32023 with data.retryAfterMs, still with 429 and Retry-After.
	DraftRateLimited = "rateLimited"
)

// DraftErrorNames are the values server.draftErrors takes, for the configuration's
// documentation.
func DraftErrorNames() []string { return []string{DraftDenials, DraftRateLimited} }

func validateDraftErrors(names []string) []error {
	var errs []error
	for i, n := range names {
		at := fmt.Sprintf("server.draftErrors[%d]", i)
		switch {
		case !slices.Contains(DraftErrorNames(), n):
			errs = append(errs, configerr.At(at, "%q: want one of %s", n, strings.Join(DraftErrorNames(), ", ")))
		case slices.Index(names, n) != i:
			errs = append(errs, configerr.At(at, "%q is listed twice", n))
		}
	}
	return errs
}

// drafts is server.draftErrors compiled, with what the shapes need.
type drafts struct {
	denials, rateLimited bool
	// contexts seals the authorizationContextId of a denial (denials.go); nil mints none.
	contexts *seal.Sealer
	// log records denials and the handles retries echo; now is the server's clock.
	log *slog.Logger
	now func() time.Time
	// callerBusy and tooManyPending are the limits' errors of fixed retry time in the shape
	// configured, built once: errCallerBusy and errTooManyPending with the switch off.
	callerBusy, tooManyPending, tooManyListens *Error
}

func compileDrafts(names []string, contexts *seal.Sealer, log *slog.Logger, now func() time.Time) drafts {
	d := drafts{log: log, now: now, denials: slices.Contains(names, DraftDenials), rateLimited: slices.Contains(names, DraftRateLimited),
		callerBusy: errCallerBusy, tooManyPending: errTooManyPending, tooManyListens: errTooManyListens}
	if d.denials {
		d.contexts = contexts
	}
	if d.rateLimited {
		d.callerBusy = d.limited(time.Second, errCallerBusy.RPC.Message)
		d.tooManyPending = d.limited(pendingRetryAfter, errTooManyPending.RPC.Message)
		d.tooManyListens = d.limited(time.Minute, errTooManyListens.RPC.Message)
	}
	return d
}

// limited is the error of a caller over one of its limits, to retry after retryAfter: 429 with
// Retry-After in whole seconds (at least 1), and -32012, or with rateLimited SEP-3304's -32023
// whose data.retryAfterMs is retryAfter in milliseconds (RL-1 to RL-3; the header rounds it
// up, so a client that reads either waits long enough). The draft's limit and remaining are
// left out: they would tell a caller the size of every quota it probes (the draft allows it).
// retryAfterSeconds is d as a Retry-After header's value: whole seconds, rounded up (a client
// that waits that long waits long enough), at least 1.
func retryAfterSeconds(d time.Duration) string {
	return strconv.FormatInt(int64(max((d+time.Second-1)/time.Second, 1)), 10)
}

func (d *drafts) limited(retryAfter time.Duration, msg string) *Error {
	e := &Error{Status: http.StatusTooManyRequests, Outcome: outcomeRateLimited,
		Header: http.Header{"Retry-After": {retryAfterSeconds(retryAfter)}}}
	if !d.rateLimited {
		e.RPC = jsonrpc.NewError(jsonrpc.CodeRateLimited, msg)
		return e
	}
	ms := max((retryAfter+time.Millisecond-1)/time.Millisecond, 0)
	e.RPC = jsonrpc.NewError(jsonrpc.CodeRateLimitedDraft, msg)
	e.RPC.Data = strconv.AppendInt([]byte(`{"retryAfterMs":`), int64(ms), 10)
	e.RPC.Data = append(e.RPC.Data, '}')
	return e
}

// pendingRetryAfter is when a caller refused for its calls waiting for the page may try again:
// a person decides on the page in about that time.
const pendingRetryAfter = time.Minute
