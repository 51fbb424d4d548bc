package gateway

import (
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mcp-gateway/gateway/internal/configerr"
	"github.com/mcp-gateway/gateway/internal/configyaml"
	"github.com/mcp-gateway/gateway/internal/embeddings"
	"github.com/mcp-gateway/gateway/internal/vault"
)

// settingRange is the values a number or duration setting takes besides zero, which keeps the
// meaning its documentation gives it (the default, or off), and a negative value, which is left
// to the setting's own check (refused, or off where documented). Below min the feature no
// longer works as documented; above max the gateway would hold memory, goroutines or
// connections no deployment needs.
type settingRange struct {
	min, max int64 // inclusive; a duration's in nanoseconds
	duration bool
}

// durations is the range from min to max of a duration setting.
func durations(min, max time.Duration) settingRange {
	return settingRange{min: int64(min), max: int64(max), duration: true}
}

// counts is the range from min to max of an integer setting.
func counts(min, max int64) settingRange { return settingRange{min: min, max: max} }

// text writes v as the file does.
func (r settingRange) text(v int64) string {
	if r.duration {
		return configyaml.FormatDuration(time.Duration(v))
	}
	return fmt.Sprint(v)
}

// String is the range as the reference and the errors write it.
func (r settingRange) String() string { return r.text(r.min) + " to " + r.text(r.max) }

// The floors the ranges below share.
const (
	// Any timeout: a TCP connection and a TLS handshake on loopback complete within it, and so
	// does a loopback backend's answer; below it a timeout fires before the first byte.
	minTimeout = 10 * time.Millisecond
	// A request's headers: room for a bearer token of several KiB (an identity provider's token
	// carrying group claims) and the headers a client and its proxies add.
	minHeaderBytes = 8 << 10
	// A requestState or cursor: a minimal sealed state (binding, expiry, nonce and tag) with
	// room for the state a backend asks to have returned.
	minTokenBytes = 1 << 10
	// A body, a response or one JSON value: an MCP message with its _meta and headers' mirror.
	minMessageBytes = 4 << 10
)

// configRanges are the ranges of the number and duration settings that have none of their own
// package's check, by generic key path. check-config and serve refuse a value outside its
// range, the reference documents it and the values schema of the chart refuses it too.
func configRanges() map[string]settingRange {
	const (
		day  = 24 * time.Hour
		kib  = 1 << 10
		mib  = 1 << 20
		gib  = 1 << 30
		many = 1_000_000
	)
	return map[string]settingRange{
		"server.maxBodyBytes":           counts(minMessageBytes, gib),
		"server.maxJSONDepth":           counts(16, 1024),
		"server.maxJSONTokenBytes":      counts(minMessageBytes, gib),
		"server.sseKeepAlive":           durations(minTimeout, time.Hour),
		"server.bodyReadTimeout":        durations(minTimeout, time.Hour),
		"server.writeTimeout":           durations(minTimeout, time.Hour),
		"server.minWriteRate":           counts(kib, gib),
		"server.maxConcurrent":          counts(1, many),
		"server.maxConcurrentPerCaller": counts(1, many),
		"server.maxListensPerCaller":    counts(1, 100_000),
		"server.drainDelay":             durations(time.Millisecond, time.Hour),
		"server.shutdownTimeout":        durations(minTimeout, time.Hour),
		"server.readHeaderTimeout":      durations(minTimeout, time.Hour),
		"server.idleTimeout":            durations(minTimeout, day),
		"server.maxHeaderBytes":         counts(minHeaderBytes, 16*mib),

		"auth.tokenCacheSize":         counts(1, 10*many),
		"auth.tokenCachePerCaller":    counts(1, 10_000),
		"auth.discoveryRetryInterval": durations(minTimeout, time.Hour),
		"auth.jwksMinRefreshInterval": durations(time.Millisecond, time.Hour),
		"auth.jwksMaxAge":             durations(time.Minute, 7*day),
		"auth.fetchTimeout":           durations(minTimeout, time.Hour),

		"mrtr.maxTokenBytes": counts(minTokenBytes, mib),

		"redis.poolSize":     counts(1, 10_000),
		"redis.dialTimeout":  durations(minTimeout, time.Hour),
		"redis.readTimeout":  durations(minTimeout, time.Hour),
		"redis.writeTimeout": durations(minTimeout, time.Hour),

		"upstreams[].timeout":                 durations(minTimeout, day),
		"upstreams[].connectTimeout":          durations(minTimeout, time.Hour),
		"upstreams[].responseHeaderTimeout":   durations(minTimeout, day),
		"upstreams[].idleConnTimeout":         durations(minTimeout, time.Hour),
		"upstreams[].maxResponseBytes":        counts(minMessageBytes, gib),
		"upstreams[].maxNotificationsPerCall": counts(1, many),
		"upstreams[].retry.backoff":           durations(time.Millisecond, time.Minute),
		"upstreams[].retry.maxBackoff":        durations(time.Millisecond, 10*time.Minute),
		"upstreams[].breaker.failures":        counts(1, many),
		"upstreams[].breaker.cooldown":        durations(minTimeout, time.Hour),
		"upstreams[].auth.timeout":            durations(minTimeout, time.Hour),
		"upstreams[].auth.maxCachedTokens":    counts(1, many),
		"upstreams[].auth.maxLegacySessions":  counts(1, 100_000),
		"upstreams[].auth.legacySessionIdle":  durations(time.Second, day),

		"interceptors[].breaker.failures":       counts(1, many),
		"interceptors[].breaker.cooldown":       durations(minTimeout, time.Hour),
		"interceptors[].auth.timeout":           durations(minTimeout, time.Hour),
		"interceptors[].auth.maxCachedTokens":   counts(1, many),
		"interceptors[].auth.maxLegacySessions": counts(1, 100_000),
		"interceptors[].auth.legacySessionIdle": durations(time.Second, day),
		"interceptors[].maxPayloadBytes":        counts(minMessageBytes, gib),
		"interceptors[].maxResponseBytes":       counts(minMessageBytes, gib),

		"legacy.maxRounds":            counts(1, 1000),
		"legacy.maxPendingPerSession": counts(1, 10_000),
		"legacy.maxPendingPerCaller":  counts(1, 100_000),
		"legacy.maxBatchBytes":        counts(minMessageBytes, gib),

		"pins.maxPerBackend":      counts(1, many),
		"pins.maxBytesPerBackend": counts(minMessageBytes, gib),

		"server.perClient.maxTracked": counts(1, 10*many),

		"legacy.askTimeout":       durations(minTimeout, day),
		"legacy.batchConcurrency": counts(1, 64),
		"legacy.batchTimeout":     durations(minTimeout, day),

		"interceptors[].maxConcurrent":  counts(1, 100_000),
		"interceptors[].connectTimeout": durations(minTimeout, time.Hour),

		"tracing.timeout": durations(minTimeout, time.Hour),

		"guardrails.schemaCache": counts(1, many),

		"search.embeddings.timeout":       durations(minTimeout, time.Hour),
		"search.embeddings.batchTimeout":  durations(minTimeout, 10*time.Minute),
		"search.embeddings.batchSize":     counts(1, 4096),
		"search.embeddings.maxConcurrent": counts(1, 1024),

		// A sixteenth of it, one caller's listens, holds a message.
		"server.maxResultBytesInFlight":        counts(16*minMessageBytes, 64*gib),
		"server.perClient.maxUnauthenticated":  counts(1, 100_000),
		"server.perClient.failedAuthPerMinute": counts(1, many),
		"server.perClient.failedAuthBurst":     counts(1, many),
		"auth.dpop.maxProofsPerCaller":         counts(1, many),
		// A token outlives a call's round trip and the clock skew between gateway and issuer.
		"upstreams[].auth.refreshBefore":    durations(time.Second, day),
		"interceptors[].auth.refreshBefore": durations(time.Second, day),
		"pins.retention":                    durations(time.Minute, 365*day),
		"pins.restoreWindow":                durations(time.Second, time.Hour),
		// An access token and a refresh token of common size, sealed.
		"userOAuth.maxRecordBytes": counts(4*kib, vault.MaxMaxRecordBytes),
		// Expiry has whole-second resolution.
		"legacy.sessionTTL": durations(time.Second, 30*day),
		// One caller's eighth holds one text.
		"search.embeddings.maxTextsPerMinute":            counts(8, many),
		"search.embeddings.maxQueriesPerCallerPerMinute": counts(1, many),
		// One caller's eighth holds one vector of the most dimensions.
		"search.embeddings.maxCacheBytes": counts(8*4*embeddings.MaxDimensions, 64*gib),
	}
}

// validateRanges refuses every number and duration setting set outside its range, each
// problem under the setting's key path in the file, naming the range and the value given.
func validateRanges(c *Config) []error {
	var errs []error
	ranges := configRanges()
	walkSettings(reflect.ValueOf(c).Elem(), "", "", func(path, generic string, v reflect.Value) {
		r, ok := ranges[generic]
		if !ok || (v.Kind() != reflect.Int && v.Kind() != reflect.Int64) {
			return
		}
		if n := v.Int(); n > 0 && (n < r.min || n > r.max) {
			errs = append(errs, configerr.At(path, "%s: want 0 (its documented meaning) or %s", r.text(n), r))
		}
	})
	return errs
}

// walkSettings calls f with each setting under v that the file writes as one value: its key
// path in the file (path, list entries numbered), its generic key path (list entries "[]") and
// its value. The entries of mappings are not visited.
func walkSettings(v reflect.Value, path, generic string, f func(path, generic string, v reflect.Value)) {
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	switch {
	case v.Kind() == reflect.Struct && !isLeafStruct(v.Type()):
		for _, fd := range configyaml.Fields(v.Type()) {
			if fd.Index == nil {
				continue
			}
			if fv, err := v.FieldByIndexErr(fd.Index); err == nil { // nil for an absent inlined block
				walkSettings(fv, joinKey(path, fd.Key), joinKey(generic, fd.Key), f)
			}
		}
	case v.Kind() == reflect.Slice:
		for i := range v.Len() {
			walkSettings(v.Index(i), fmt.Sprintf("%s[%d]", path, i), generic+"[]", f)
		}
	case v.Kind() != reflect.Map:
		f(path, generic, v)
	}
}

// joinKey is key under path.
func joinKey(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// documentRanges writes each ranged setting's range into its schema: in its description, which
// the reference shows, and, for an integer, as the values it takes, which editors and the
// chart's values schema refuse others than.
func documentRanges(s *jsonschema.Schema, path string, ranges map[string]settingRange) {
	if r, ok := ranges[path]; ok {
		s.Description = strings.TrimSpace(s.Description + " A positive value: " + r.String() + ".")
		if s.Type == "integer" {
			s.Maximum, s.Minimum = nil, nil
			s.AnyOf = []*jsonschema.Schema{{Maximum: new(0.0)}, {Minimum: new(float64(r.min)), Maximum: new(float64(r.max))}}
		}
	}
	for key, p := range s.Properties {
		documentRanges(p, joinKey(path, key), ranges)
	}
	if s.Items != nil {
		documentRanges(s.Items, path+"[]", ranges)
	}
}
