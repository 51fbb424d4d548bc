package gateway

import (
	"maps"
	"reflect"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/authz/dpop"
	"github.com/mcp-gateway/gateway/internal/approval"
	"github.com/mcp-gateway/gateway/internal/configyaml"
	"github.com/mcp-gateway/gateway/internal/embeddings"
	"github.com/mcp-gateway/gateway/internal/guardrails"
	"github.com/mcp-gateway/gateway/internal/intercept"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/pins"
	"github.com/mcp-gateway/gateway/internal/seal"
	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/internal/tracing"
	"github.com/mcp-gateway/gateway/internal/useroauth"
	"github.com/mcp-gateway/gateway/internal/vault"
	"github.com/mcp-gateway/gateway/mcphttp"
	"github.com/mcp-gateway/gateway/mrtr"
	"github.com/mcp-gateway/gateway/upstreams"
)

// configDefaults is every setting's default, by generic key path (list entries "[]", map
// entries "*"), as the code applies it: what applyDefaults sets on a configuration that sets
// nothing, read back from the result, and the defaults each package applies where it compiles
// its block, from the constants and functions it applies them with. The JSON Schema, the
// configuration reference and the test of the README's values are generated from it.
func configDefaults() map[string]any {
	c := newConfig()
	c.applyDefaults()
	out := map[string]any{}
	collectDefaults(reflect.ValueOf(c), "", out)
	for _, defaults := range []map[string]any{edgeDefaults(), backendDefaults(), featureDefaults(), extensionDefaults()} {
		maps.Copy(out, defaults)
	}
	return out
}

// edgeDefaults are the defaults the packages apply to the request limits, authentication and the
// shared state.
func edgeDefaults() map[string]any {
	return map[string]any{
		"server.maxJSONDepth":      jsonrpc.DefaultMaxDepth,
		"server.maxJSONTokenBytes": jsonrpc.DefaultMaxTokenBytes,
		"server.search.maxResults": mcphttp.DefaultSearchResults,

		"auth.clockSkew":               authz.DefaultClockSkew,
		"auth.scopeClaim":              authz.DefaultScopeClaims(),
		"auth.groupsClaim":             authz.DefaultGroupsClaim,
		"auth.tokenCacheSize":          authz.DefaultTokenCacheSize,
		"auth.tokenCachePerCaller":     authz.DefaultTokenCachePerCaller,
		"auth.discoveryRetryInterval":  authz.DefaultDiscoveryRetryInterval,
		"auth.jwksMinRefreshInterval":  authz.DefaultJWKSMinRefreshInterval,
		"auth.jwksMaxAge":              authz.DefaultJWKSMaxAge,
		"auth.fetchTimeout":            authz.DefaultFetchTimeout,
		"auth.issuers[].algorithms":    authz.DefaultAlgorithms(),
		"auth.dpop.mode":               authz.DPoPOff,
		"auth.dpop.algorithms":         dpop.DefaultAlgorithms(),
		"auth.dpop.window":             dpop.DefaultWindow,
		"auth.dpop.maxProofsPerCaller": authz.DefaultMaxProofsPerCaller,
		"auth.dpop.nonce.lifetime":     dpop.DefaultNonceLifetime,

		"mrtr.ttl":                 mrtr.DefaultTTL,
		"mrtr.maxTokenBytes":       seal.DefaultMaxTokenBytes,
		"mrtr.maxAnswersPerCaller": mrtr.DefaultMaxAnswersPerCaller,

		"redis.keyPrefix":        store.DefaultKeyPrefix,
		"redis.dialTimeout":      store.DefaultDialTimeout,
		"redis.readTimeout":      store.DefaultReadTimeout,
		"redis.writeTimeout":     store.DefaultWriteTimeout,
		"redis.maxRetries":       store.DefaultMaxRetries,
		"redis.waitTimeout":      store.DefaultWaitTimeout,
		"redis.breaker.failures": store.DefaultBreakerFailures,
		"redis.breaker.cooldown": store.DefaultBreakerCooldown,
	}
}

// backendDefaults are the defaults the backends' package applies.
func backendDefaults() map[string]any {
	return map[string]any{
		"namespace.separator": upstreams.DefaultSeparator,
		"healthInterval":      upstreams.DefaultHealthInterval,
		"pageSize":            upstreams.DefaultPageSize,
		"cache.maxEntries":    upstreams.DefaultCacheEntries,
		"cache.maxBytes":      upstreams.DefaultCacheBytes,

		"upstreams[].timeout":                 upstreams.DefaultTimeout,
		"upstreams[].connectTimeout":          upstreams.DefaultConnectTimeout,
		"upstreams[].maxResponseBytes":        upstreams.DefaultMaxResponseBytes,
		"upstreams[].maxNotificationsPerCall": upstreams.DefaultMaxNotificationsPerCall,
		"upstreams[].idleConnTimeout":         upstreams.DefaultIdleConnTimeout,
		"upstreams[].protocol":                upstreams.DefaultProtocol,
		"upstreams[].responseHeaderTimeout":   upstreams.DefaultResponseHeaderTimeout,
		"upstreams[].retry.attempts":          upstreams.DefaultRetryAttempts,
		"upstreams[].retry.backoff":           upstreams.DefaultRetryBackoff,
		"upstreams[].retry.maxBackoff":        upstreams.DefaultRetryMaxBackoff,
		"upstreams[].breaker.failures":        upstreams.DefaultBreakerFailures,
		"upstreams[].breaker.cooldown":        upstreams.DefaultBreakerCooldown,
		"upstreams[].breaker.minCallers":      upstreams.DefaultBreakerMinCallers,
		"upstreams[].breaker.trackedCallers":  upstreams.DefaultBreakerTrackedCallers,
		"upstreams[].auth.timeout":            upstreams.DefaultTokenTimeout,
		"upstreams[].auth.refreshBefore":      upstreams.DefaultTokenRefreshBefore,
		"upstreams[].auth.maxCachedTokens":    upstreams.DefaultMaxExchangedTokens,
		"upstreams[].auth.maxLegacySessions":  upstreams.DefaultMaxLegacySessions,
		"upstreams[].auth.legacySessionIdle":  upstreams.DefaultLegacySessionIdle,
	}
}

// featureDefaults are the defaults of tracing, the approval page, pins and per-user OAuth.
func featureDefaults() map[string]any {
	tr := tracing.Config{}.WithDefaults()
	ap := approval.Config{}.WithDefaults()
	uo := useroauth.Config{}.WithDefaults()
	return map[string]any{
		"tracing.serviceName": tr.ServiceName,
		"tracing.sampleRatio": tr.SampleRatio,
		"tracing.timeout":     tr.Timeout,

		"approval.path":                     ap.Path,
		"approval.sessionTTL":               ap.SessionTTL,
		"approval.maxPendingPerCaller":      ap.MaxPendingPerCaller,
		"approval.maxPendingBytesPerCaller": ap.MaxPendingBytesPerCaller,

		"pins.maxPerBackend":      pins.DefaultMaxPerBackend,
		"pins.maxBytesPerBackend": pins.DefaultMaxBytesPerBackend,
		"pins.retention":          pins.DefaultRetention,
		"pins.restoreWindow":      pins.DefaultRestoreWindow,

		"userOAuth.path":            uo.Path,
		"userOAuth.consentTTL":      uo.ConsentTTL,
		"userOAuth.clientName":      uo.ClientName,
		"userOAuth.maxRecordBytes":  vault.DefaultMaxRecordBytes,
		"userOAuth.recordIdle":      uo.RecordIdle,
		"userOAuth.recordMaxAge":    uo.RecordMaxAge,
		"userOAuth.refreshCooldown": uo.RefreshCooldown,
	}
}

// extensionDefaults are the defaults of interceptors, guardrails and tool search, and of the
// settings whose default is applied where they are read.
func extensionDefaults() map[string]any {
	ic := intercept.Config{}.WithDefaults()
	em := embeddings.Config{}.WithDefaults()
	return map[string]any{
		"interceptors[].mode":                   string(ic.Mode),
		"interceptors[].timeout":                ic.Timeout,
		"interceptors[].maxConcurrent":          ic.MaxConcurrent,
		"interceptors[].maxPayloadBytes":        ic.MaxPayloadBytes,
		"interceptors[].maxResponseBytes":       ic.MaxResponseBytes,
		"interceptors[].breaker.failures":       upstreams.DefaultBreakerFailures,
		"interceptors[].breaker.cooldown":       upstreams.DefaultBreakerCooldown,
		"interceptors[].breaker.minCallers":     upstreams.DefaultBreakerMinCallers,
		"interceptors[].breaker.trackedCallers": upstreams.DefaultBreakerTrackedCallers,
		"interceptors[].auth.timeout":           upstreams.DefaultTokenTimeout,
		"interceptors[].auth.refreshBefore":     upstreams.DefaultTokenRefreshBefore,
		"interceptors[].auth.maxCachedTokens":   upstreams.DefaultMaxExchangedTokens,
		"interceptors[].auth.maxLegacySessions": upstreams.DefaultMaxLegacySessions,
		"interceptors[].auth.legacySessionIdle": upstreams.DefaultLegacySessionIdle,

		"guardrails.schemaCache": guardrails.DefaultSchemaCache,

		"search.embeddings.apiKeyHeader":                 em.APIKeyHeader,
		"search.embeddings.timeout":                      em.Timeout,
		"search.embeddings.batchTimeout":                 em.BatchTimeout,
		"search.embeddings.batchSize":                    em.BatchSize,
		"search.embeddings.maxTextsPerMinute":            em.MaxTextsPerMinute,
		"search.embeddings.maxConcurrent":                em.MaxConcurrent,
		"search.embeddings.maxQueriesPerCallerPerMinute": em.MaxQueriesPerCallerPerMinute,
		"search.embeddings.maxCacheBytes":                em.MaxCacheBytes,
		"search.embeddings.fusion":                       em.Fusion,
		"search.embeddings.weight":                       em.Weight,
		"search.embeddings.rrfK":                         em.RRFK,

		"pins.mode":                          string((&pins.Config{}).ModeFor("any")),
		"pins.actions":                       pinActionDefaults(),
		"toolsets[].search.maxResults":       mcphttp.DefaultSearchResults,
		"toolsets[].search.enabled":          false,
		"auth.policy.rules[].effect":         authz.EffectAllow,
		"upstreams[].required":               false,
		"upstreams[].tls.insecureSkipVerify": false,
	}
}

// collectDefaults records the settings of v, a configuration with its defaults applied, that
// are not zero, and every boolean: what an operator gets without writing them.
func collectDefaults(v reflect.Value, path string, out map[string]any) {
	for _, f := range configyaml.Fields(v.Type()) {
		if f.Index == nil {
			continue
		}
		fv := v.FieldByIndex(f.Index)
		p := path + f.Key
		switch {
		case fv.Kind() == reflect.Struct && !isLeafStruct(fv.Type()):
			collectDefaults(fv, p+".", out)
		case fv.Kind() == reflect.Bool:
			out[p] = fv.Bool()
		case fv.Kind() == reflect.Pointer, fv.Kind() == reflect.Map, fv.Kind() == reflect.Slice && fv.Type().Elem().Kind() != reflect.String:
		case !fv.IsZero():
			out[p] = fv.Interface()
		}
	}
}

// isLeafStruct reports a struct the file writes as one value.
func isLeafStruct(t reflect.Type) bool { return t == reflect.TypeFor[Secret]() }

// pinActionDefaults is pins.DefaultActions as the file writes it.
func pinActionDefaults() map[string]string {
	defaults := pins.DefaultActions()
	out := make(map[string]string, len(defaults))
	for class, action := range defaults {
		out[string(class)] = string(action)
	}
	return out
}
