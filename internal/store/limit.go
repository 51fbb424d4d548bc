package store

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Bounds on a Limit, chosen so that all bucket arithmetic stays exact in both
// Go int64 and Redis Lua doubles (integers up to 2^53).
const (
	// MaxRate is the largest Limit.Rate accepted.
	MaxRate = 1_000_000_000
	// MaxBurst is the largest Limit.Burst accepted.
	MaxBurst = 1_000_000_000
	// MaxPeriod is the longest Limit.Period accepted.
	MaxPeriod = 366 * 24 * time.Hour
	// maxWindowMicros bounds Burst × interval (about 35 years).
	maxWindowMicros = int64(1) << 50
)

// Limit is a rate limit: Rate events per Period, with up to Burst events
// admitted back to back. Its text form (ParseLimit, String, and YAML through
// encoding.TextUnmarshaler) is "<rate>/<period>[ burst <n>]", for example
// "60/m", "10/s burst 20" or "1000/h".
//
// The algorithm is GCRA (the generic cell rate algorithm, equivalent to a
// token bucket of capacity Burst refilled at Rate per Period): one token is
// emitted every Period/Rate, truncated to whole microseconds. Memory and
// Redis stores share this arithmetic.
type Limit struct {
	// Rate is how many events are admitted per Period once the burst is spent.
	// Must be 1..MaxRate.
	Rate int
	// Period is the window Rate refers to. Must be positive, at most
	// MaxPeriod, and at least Rate microseconds.
	Period time.Duration
	// Burst is the bucket capacity: how many events may pass back to back
	// after a quiet spell. 0 means Rate (a full period's worth).
	Burst int
}

// RateDecision is the outcome of one Allow call.
type RateDecision struct {
	// Allowed reports whether the event was admitted (and a token taken).
	Allowed bool
	// Remaining is how many further events would be admitted right now.
	Remaining int
	// RetryAfter is how long to wait until one event would be admitted; zero
	// when Allowed.
	RetryAfter time.Duration
	// ResetAfter is how long until the bucket is full again (for
	// RateLimit-Reset style headers).
	ResetAfter time.Duration
	// Limit is the limit the decision was made under.
	Limit Limit
}

// periodUnits maps the unit words ParseLimit accepts to durations.
func periodUnit(s string) (time.Duration, bool) {
	switch s {
	case "s", "sec", "second":
		return time.Second, true
	case "m", "min", "minute":
		return time.Minute, true
	case "h", "hour":
		return time.Hour, true
	case "d", "day":
		return 24 * time.Hour, true
	}
	return 0, false
}

// ParseLimit parses "<rate>/<period>[ burst <n>]". The period is a unit word
// (s, sec, second, m, min, minute, h, hour, d, day) or a Go duration such as
// "10s" ("100/10s"). The result is validated.
func ParseLimit(s string) (Limit, error) {
	fields := strings.Fields(s)
	if len(fields) != 1 && (len(fields) != 3 || fields[1] != "burst") {
		return Limit{}, fmt.Errorf("%w: %q: want \"<rate>/<period>[ burst <n>]\"", ErrInvalidLimit, s)
	}
	rateText, periodText, ok := strings.Cut(fields[0], "/")
	if !ok {
		return Limit{}, fmt.Errorf("%w: %q: missing \"/\"", ErrInvalidLimit, s)
	}
	var l Limit
	var errs []error
	var err error
	if l.Rate, err = strconv.Atoi(rateText); err != nil {
		errs = append(errs, fmt.Errorf("rate %q is not an integer", rateText))
	}
	if l.Period, err = parsePeriod(periodText); err != nil {
		errs = append(errs, err)
	}
	if len(fields) == 3 {
		if l.Burst, err = strconv.Atoi(fields[2]); err != nil {
			errs = append(errs, fmt.Errorf("burst %q is not an integer", fields[2]))
		}
	}
	if len(errs) > 0 {
		return Limit{}, fmt.Errorf("%w: %q: %w", ErrInvalidLimit, s, errors.Join(errs...))
	}
	return l, l.Validate()
}

func parsePeriod(s string) (time.Duration, error) {
	if d, ok := periodUnit(s); ok {
		return d, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("period %q is neither a unit (s, m, h, d) nor a duration", s)
	}
	return d, nil
}

// Validate reports every problem with l, wrapped in ErrInvalidLimit.
func (l Limit) Validate() error {
	var errs []error
	if l.Rate < 1 || l.Rate > MaxRate {
		errs = append(errs, fmt.Errorf("rate %d out of range 1..%d", l.Rate, MaxRate))
	}
	if l.Period <= 0 || l.Period > MaxPeriod {
		errs = append(errs, fmt.Errorf("period %v out of range (0, %v]", l.Period, MaxPeriod))
	}
	if l.Burst < 0 || l.Burst > MaxBurst {
		errs = append(errs, fmt.Errorf("burst %d out of range 0..%d", l.Burst, MaxBurst))
	}
	if len(errs) == 0 {
		interval := l.Period.Microseconds() / int64(l.Rate)
		switch {
		case interval < 1:
			errs = append(errs, fmt.Errorf("rate %d per %v is finer than one event per microsecond", l.Rate, l.Period))
		case int64(l.burst()) > maxWindowMicros/interval:
			errs = append(errs, fmt.Errorf("burst %d at %d/%v spans more than %v", l.burst(), l.Rate, l.Period, time.Duration(maxWindowMicros)*time.Microsecond))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", ErrInvalidLimit, errors.Join(errs...))
	}
	return nil
}

// burst is the effective bucket capacity.
func (l Limit) burst() int {
	if l.Burst == 0 {
		return l.Rate
	}
	return l.Burst
}

// String formats l in the form ParseLimit reads.
func (l Limit) String() string {
	var b strings.Builder
	b.WriteString(strconv.Itoa(l.Rate))
	b.WriteByte('/')
	switch l.Period {
	case time.Second:
		b.WriteString("s")
	case time.Minute:
		b.WriteString("m")
	case time.Hour:
		b.WriteString("h")
	case 24 * time.Hour:
		b.WriteString("d")
	default:
		b.WriteString(l.Period.String())
	}
	if l.Burst != 0 {
		b.WriteString(" burst ")
		b.WriteString(strconv.Itoa(l.Burst))
	}
	return b.String()
}

// MarshalText implements encoding.TextMarshaler.
func (l Limit) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler, so config files can write
// a limit as "60/m burst 10".
func (l *Limit) UnmarshalText(text []byte) error {
	parsed, err := ParseLimit(string(text))
	if err != nil {
		return err
	}
	*l = parsed
	return nil
}

// gcra is a validated Limit in the integer microseconds both stores compute in.
type gcra struct {
	interval int64 // microseconds between tokens
	burst    int64
}

func newGCRA(l Limit) (gcra, error) {
	if err := l.Validate(); err != nil {
		return gcra{}, err
	}
	return gcra{interval: l.Period.Microseconds() / int64(l.Rate), burst: int64(l.burst())}, nil
}

// gcraResult is one step of the algorithm, all times in microseconds.
type gcraResult struct {
	allowed    bool
	tat        int64 // theoretical arrival time to store when allowed
	remaining  int64
	retryAfter int64
	resetAfter int64
}

// step decides one event at now given the stored theoretical arrival time
// (0 when the key has none). The Redis script mirrors this line by line.
func (g gcra) step(storedTAT, now int64) gcraResult {
	tat := max(storedTAT, now)
	newTAT := tat + g.interval
	allowAt := newTAT - g.burst*g.interval
	if now < allowAt {
		return gcraResult{retryAfter: allowAt - now, resetAfter: tat - now}
	}
	return gcraResult{
		allowed:    true,
		tat:        newTAT,
		remaining:  (now - allowAt) / g.interval,
		resetAfter: newTAT - now,
	}
}

// decision converts a step result into the exported form.
func (r gcraResult) decision(l Limit) RateDecision {
	return RateDecision{
		Allowed:    r.allowed,
		Remaining:  int(r.remaining),
		RetryAfter: time.Duration(r.retryAfter) * time.Microsecond,
		ResetAfter: time.Duration(r.resetAfter) * time.Microsecond,
		Limit:      l,
	}
}
