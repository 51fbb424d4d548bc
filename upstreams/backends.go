package upstreams

import (
	"github.com/mcp-gateway/gateway/upstreams/backend"
)

// The per-backend part of the configuration and of the API is package backend's; these names
// keep the Registry's callers to one import.

// ProtocolVersion is the MCP revision the gateway speaks to modern backends.
const ProtocolVersion = backend.ProtocolVersion

// UpstreamConfig describes one backend MCP server (see backend.Config).
type UpstreamConfig = backend.Config

// TLSConfig is the TLS setting of one backend (see backend.TLSConfig).
type TLSConfig = backend.TLSConfig

// SubjectKey is the key of what a token-exchange backend answered for the caller's token
// (backend.SubjectKey): compute it once per request and pass it beside the token.
func SubjectKey(token string) string { return backend.SubjectKey(token) }

// AuthConfig is how the gateway authenticates to one backend with OAuth (see backend.AuthConfig).
type AuthConfig = backend.AuthConfig

// RetryConfig tunes the retries of requests that are safe to repeat (see backend.RetryConfig).
type RetryConfig = backend.RetryConfig

// BreakerConfig tunes one backend's circuit breaker (see backend.BreakerConfig).
type BreakerConfig = backend.BreakerConfig

// Call is one client request routed to exactly one backend (see backend.Call).
type Call = backend.Call

// Stream yields a backend's messages for one call (see backend.Stream).
type Stream = backend.Stream

// Defaults and bounds of UpstreamConfig, documented in package backend.
const (
	DefaultTimeout                 = backend.DefaultTimeout
	DefaultConnectTimeout          = backend.DefaultConnectTimeout
	DefaultMaxResponseBytes        = backend.DefaultMaxResponseBytes
	DefaultMaxNotificationsPerCall = backend.DefaultMaxNotificationsPerCall
	DefaultIdleConnTimeout         = backend.DefaultIdleConnTimeout
	DefaultResponseHeaderTimeout   = backend.DefaultResponseHeaderTimeout
	DefaultTokenTimeout            = backend.DefaultTokenTimeout
	DefaultTokenRefreshBefore      = backend.DefaultTokenRefreshBefore
	DefaultTokenLifetime           = backend.DefaultTokenLifetime
	DefaultMaxExchangedTokens      = backend.DefaultMaxExchangedTokens
	DefaultMaxLegacySessions       = backend.DefaultMaxLegacySessions
	DefaultLegacySessionIdle       = backend.DefaultLegacySessionIdle
	DefaultRetryAttempts           = backend.DefaultRetryAttempts
	DefaultRetryBackoff            = backend.DefaultRetryBackoff
	DefaultRetryMaxBackoff         = backend.DefaultRetryMaxBackoff
	MaxRetryAttempts               = backend.MaxRetryAttempts
	DefaultBreakerFailures         = backend.DefaultBreakerFailures
	DefaultBreakerCooldown         = backend.DefaultBreakerCooldown
	DefaultBreakerMinCallers       = backend.DefaultBreakerMinCallers
	DefaultBreakerTrackedCallers   = backend.DefaultBreakerTrackedCallers
	DefaultUserAgent               = backend.DefaultUserAgent
	MaxDiscoverTTL                 = backend.MaxDiscoverTTL
	MaxInstructionsBytes           = backend.MaxInstructionsBytes
	DefaultMaxResultBytesInFlight  = 128 << 20 // the default of Options.MaxResultBytesInFlight
)

// Values of UpstreamConfig.Protocol and of UpstreamConfig.Auth.Type (see package backend).
const (
	ProtocolAuto          = backend.ProtocolAuto
	DefaultProtocol       = backend.DefaultProtocol
	AuthClientCredentials = backend.AuthClientCredentials
	AuthTokenExchange     = backend.AuthTokenExchange
	AuthUserOAuth         = backend.AuthUserOAuth
)

// UserTokens hands out the callers' tokens of per-user backends (see backend.UserTokens).
type UserTokens = backend.UserTokens

// ProtocolChoices are the values UpstreamConfig.Protocol takes: auto, then the revisions it can
// be pinned to.
func ProtocolChoices() []string { return backend.ProtocolChoices() }

// Circuit states passed to Options.CircuitState (see backend.CircuitClosed).
const (
	CircuitClosed   = backend.CircuitClosed
	CircuitOpen     = backend.CircuitOpen
	CircuitHalfOpen = backend.CircuitHalfOpen
)

// Outcomes passed to Options.Observe (see backend.OutcomeOK).
const (
	OutcomeOK           = backend.OutcomeOK
	OutcomeBackendError = backend.OutcomeBackendError
	OutcomeUnavailable  = backend.OutcomeUnavailable
	OutcomeTimeout      = backend.OutcomeTimeout
	OutcomeBadResponse  = backend.OutcomeBadResponse
	OutcomeCanceled     = backend.OutcomeCanceled
)
