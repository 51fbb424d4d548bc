package loadgen

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Defaults and hard caps of a run. The caps keep a typo from turning into an hour-long flood.
const (
	DefaultConcurrency = 1
	DefaultDuration    = 10 * time.Second
	DefaultTimeout     = 30 * time.Second
	DefaultTool        = "echo"
	DefaultArgs        = `{"text":"hello"}`
	DefaultSSETool     = "progress"
	DefaultSSEArgs     = `{"steps":3}`
	DefaultConfirmTool = "confirm"
	DefaultConfirmArgs = `{}`
	// DefaultConfirmContent answers every input request of a confirmation with this content.
	DefaultConfirmContent = `{"approve":true}`

	MaxConcurrency = 4096
	MaxRequests    = 50_000_000
	MaxDuration    = 30 * time.Minute
	MaxTimeout     = 10 * time.Minute
)

// Op is one kind of operation in a mix.
type Op string

// The operations a mix can weight.
const (
	// OpCall is one tools/call of Config.Tool with Config.Args.
	OpCall Op = "call"
	// OpList is one tools/list (first page only).
	OpList Op = "list"
	// OpConfirm is an MRTR round trip (docs/protocol.md §3): tools/call answered with input_required, then
	// the retry with a new id, the same params, inputResponses and the echoed requestState. The
	// pair counts as one operation.
	OpConfirm Op = "confirm"
	// OpSSE is one tools/call of Config.SSETool with a progressToken; it must stream at least one
	// progress notification before its result.
	OpSSE Op = "sse"
	// OpLegacyCall is one tools/call of Config.Tool as a 2025-11-25 client sends it through the
	// gateway's edge (docs/protocol.md §9): with its session id and version header, without
	// _meta protocol keys or Mcp-Method/Mcp-Name. Each worker opens its session once, at its
	// first legacy-call, and keeps it for the runner's life.
	OpLegacyCall Op = "legacy-call"
	// OpLegacyInit is the handshake of a legacy-call worker (initialize, then
	// notifications/initialized): never part of a mix, it is reported as its own operation so
	// the calls' figures stay those of calls.
	OpLegacyInit Op = "legacy-init"
)

// Weighted is one operation and its relative weight in a mix.
type Weighted struct {
	Op     Op
	Weight int
}

// Mix is a weighted set of operations; each worker draws the next operation from it.
type Mix []Weighted

// ErrBadMix is returned by ParseMix for a malformed mix.
var ErrBadMix = errors.New("bad mix")

// ParseMix parses "call", "call:8,list:1,confirm:1" and the like; a missing weight is 1.
func ParseMix(s string) (Mix, error) {
	var m Mix
	for part := range strings.SplitSeq(s, ",") {
		name, w, hasW := strings.Cut(strings.TrimSpace(part), ":")
		weight := 1
		if hasW {
			n, err := strconv.Atoi(w)
			if err != nil || n <= 0 || n > 1_000_000 {
				return nil, fmt.Errorf("%w: weight %q must be a positive integer", ErrBadMix, w)
			}
			weight = n
		}
		op := Op(name)
		switch op {
		case OpCall, OpList, OpConfirm, OpSSE, OpLegacyCall:
		default:
			return nil, fmt.Errorf("%w: unknown operation %q (call, list, confirm, sse, legacy-call)", ErrBadMix, name)
		}
		m = append(m, Weighted{Op: op, Weight: weight})
	}
	return m, nil
}

// String renders m as ParseMix reads it.
func (m Mix) String() string {
	parts := make([]string, len(m))
	for i, w := range m {
		parts[i] = string(w.Op) + ":" + strconv.Itoa(w.Weight)
	}
	return strings.Join(parts, ",")
}

// Config is one load run.
type Config struct {
	// URL is the MCP endpoint, e.g. http://127.0.0.1:8080/mcp. Its host must be loopback.
	URL string
	// Concurrency is the number of closed-loop workers: each sends its next operation when the
	// previous one completes. Default DefaultConcurrency; at most MaxConcurrency.
	Concurrency int
	// Requests stops the run after this many operations (0: no count bound). At most MaxRequests.
	Requests int64
	// Duration stops the measured phase after this long (0: no time bound, unless Requests is
	// also 0, then DefaultDuration). At most MaxDuration.
	Duration time.Duration
	// Warmup runs the same load for this long before measuring and discards its figures, so
	// connection set-up and first-use costs stay out of the result. At most MaxDuration.
	Warmup time.Duration
	// Timeout bounds one HTTP request. Default DefaultTimeout; at most MaxTimeout.
	Timeout time.Duration
	// Mix is the weighted set of operations. Default: OpCall only.
	Mix Mix
	// Tool and Args are the tool name and arguments object of OpCall. Defaults DefaultTool and
	// DefaultArgs.
	Tool string
	Args json.RawMessage
	// SSETool and SSEArgs are the tool and arguments of OpSSE. Defaults DefaultSSETool and
	// DefaultSSEArgs.
	SSETool string
	SSEArgs json.RawMessage
	// ConfirmTool and ConfirmArgs are the tool and arguments of OpConfirm. Defaults
	// DefaultConfirmTool and DefaultConfirmArgs.
	ConfirmTool string
	ConfirmArgs json.RawMessage
	// ConfirmContent is the accepted content sent for every input request. Default
	// DefaultConfirmContent.
	ConfirmContent json.RawMessage
	// Token, when set, is sent as "Authorization: Bearer <Token>". It is never printed.
	Token string
	// CPU lists processes whose CPU time the report charges per HTTP request (Report.CPU).
	CPU []CPUGroup
}

// withDefaults returns c with every zero field set to its default.
func (c Config) withDefaults() Config {
	if c.Concurrency == 0 {
		c.Concurrency = DefaultConcurrency
	}
	if c.Requests == 0 && c.Duration == 0 {
		c.Duration = DefaultDuration
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if len(c.Mix) == 0 {
		c.Mix = Mix{{Op: OpCall, Weight: 1}}
	}
	def := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	defRaw := func(r *json.RawMessage, v string) {
		if len(*r) == 0 {
			*r = json.RawMessage(v)
		}
	}
	def(&c.Tool, DefaultTool)
	def(&c.SSETool, DefaultSSETool)
	def(&c.ConfirmTool, DefaultConfirmTool)
	defRaw(&c.Args, DefaultArgs)
	defRaw(&c.SSEArgs, DefaultSSEArgs)
	defRaw(&c.ConfirmArgs, DefaultConfirmArgs)
	defRaw(&c.ConfirmContent, DefaultConfirmContent)
	return c
}

// Validate reports every problem with c after defaults are applied; it changes nothing.
func (c Config) Validate() error {
	c = c.withDefaults()
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if c.URL == "" {
		bad("URL is required")
	}
	if c.Concurrency < 1 || c.Concurrency > MaxConcurrency {
		bad("concurrency %d must be in [1, %d]", c.Concurrency, MaxConcurrency)
	}
	if c.Requests < 0 || c.Requests > MaxRequests {
		bad("requests %d must be in [0, %d]", c.Requests, MaxRequests)
	}
	if c.Duration < 0 || c.Duration > MaxDuration {
		bad("duration %s must be in [0, %s]", c.Duration, MaxDuration)
	}
	if c.Warmup < 0 || c.Warmup > MaxDuration {
		bad("warmup %s must be in [0, %s]", c.Warmup, MaxDuration)
	}
	if c.Timeout < 0 || c.Timeout > MaxTimeout {
		bad("timeout %s must be in [0, %s]", c.Timeout, MaxTimeout)
	}
	for _, w := range c.Mix {
		if w.Weight <= 0 {
			bad("mix weight of %s must be positive", w.Op)
		}
	}
	objects := []struct {
		name string
		raw  json.RawMessage
	}{{"args", c.Args}, {"sse args", c.SSEArgs}, {"confirm args", c.ConfirmArgs}, {"confirm content", c.ConfirmContent}}
	for _, o := range objects {
		if !isObject(o.raw) {
			bad("%s must be a JSON object", o.name)
		}
	}
	if strings.ContainsAny(c.Token, "\r\n") {
		bad("token must not contain line breaks")
	}
	return errors.Join(errs...)
}

func isObject(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil && m != nil
}
