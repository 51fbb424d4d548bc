package metrics

import (
	"errors"
	"fmt"
	"unicode"
	"unicode/utf8"
)

// Defaults and limits for Options.
const (
	// DefaultMaxToolsPerUpstream is the allowlist cap used when
	// Options.MaxToolsPerUpstream is zero.
	DefaultMaxToolsPerUpstream = 1000
	// MaxToolsPerUpstreamLimit is the largest cap Validate accepts; beyond it
	// one backend alone could push the tool series past what a Prometheus
	// server scrapes comfortably (cap × outcomes series per backend).
	MaxToolsPerUpstreamLimit = 10000
	// DefaultVersion is the build_info version used when Options.Version is empty.
	DefaultVersion = "unknown"
	// MaxLabelValueLength bounds the configured upstream names and the tool
	// names accepted into the allowlist, in bytes. Tool names SHOULD be at
	// most 128 characters (spec §5.2).
	MaxLabelValueLength = 128
)

// Sentinel errors returned (joined) by Options.Validate.
var (
	// ErrInvalidUpstream reports an upstream name unusable as a label value.
	ErrInvalidUpstream = errors.New("metrics: invalid upstream name")
	// ErrDuplicateUpstream reports an upstream name listed twice.
	ErrDuplicateUpstream = errors.New("metrics: duplicate upstream name")
	// ErrInvalidMaxTools reports a tool cap outside 0..MaxToolsPerUpstreamLimit.
	ErrInvalidMaxTools = errors.New("metrics: invalid MaxToolsPerUpstream")
	// ErrInvalidVersion reports a version string unusable as a label value.
	ErrInvalidVersion = errors.New("metrics: invalid version")
)

// Options configures a Recorder.
type Options struct {
	// Upstreams are the configured backend names, the only values the
	// upstream label takes besides Other. Names must be non-empty valid
	// UTF-8 of at most MaxLabelValueLength bytes, unique, and not Other.
	Upstreams []string
	// MaxToolsPerUpstream caps the tool allowlist of each upstream; tools
	// beyond it are counted as Other. Zero means DefaultMaxToolsPerUpstream.
	MaxToolsPerUpstream int
	// Version is the gateway build version exported by
	// mcp_gateway_build_info. Empty means DefaultVersion.
	Version string
}

// Validate reports every problem in o at once; it changes nothing.
func (o Options) Validate() error {
	var errs []error
	seen := make(map[string]bool, len(o.Upstreams))
	for i, u := range o.Upstreams {
		if !validLabelValue(u) || u == Other {
			errs = append(errs, fmt.Errorf("%w: upstreams[%d] %q", ErrInvalidUpstream, i, u))
			continue
		}
		if seen[u] {
			errs = append(errs, fmt.Errorf("%w: upstreams[%d] %q", ErrDuplicateUpstream, i, u))
		}
		seen[u] = true
	}
	if o.MaxToolsPerUpstream < 0 || o.MaxToolsPerUpstream > MaxToolsPerUpstreamLimit {
		errs = append(errs, fmt.Errorf("%w: %d not in 0..%d",
			ErrInvalidMaxTools, o.MaxToolsPerUpstream, MaxToolsPerUpstreamLimit))
	}
	if o.Version != "" && !validLabelValue(o.Version) {
		errs = append(errs, fmt.Errorf("%w: %q", ErrInvalidVersion, o.Version))
	}
	return errors.Join(errs...)
}

func (o Options) maxTools() int {
	if o.MaxToolsPerUpstream == 0 {
		return DefaultMaxToolsPerUpstream
	}
	return o.MaxToolsPerUpstream
}

func (o Options) version() string {
	if o.Version == "" {
		return DefaultVersion
	}
	return o.Version
}

// validLabelValue accepts non-empty valid UTF-8 without control characters,
// at most MaxLabelValueLength bytes. The client library rejects invalid
// UTF-8 with a panic, and control characters only confuse dashboards.
func validLabelValue(s string) bool {
	if s == "" || len(s) > MaxLabelValueLength || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) { // C0, DEL and C1
			return false
		}
	}
	return true
}
