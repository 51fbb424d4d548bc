package gateway

import (
	"fmt"

	"github.com/mcp-gateway/gateway/internal/configerr"
	"github.com/mcp-gateway/gateway/internal/loopback"
)

// minAdminTokenLength is the shortest admin.token accepted: as long as the MRTR keys, so that
// it cannot be guessed over the network.
const minAdminTokenLength = 32

// validateAccess: an admin listener that is not loopback-only needs admin.token, since /metrics,
// /pins and the detail of /readyz reveal the configuration and the tool inventory to anything
// that can reach the port; pprof is for loopback only, token or not.
func (a AdminConfig) validateAccess() []error {
	var errs []error
	local := loopback.Addr(a.Listen)
	switch {
	case !a.Token.IsZero():
		// Its sources are checked with every other secret (secretRefs), its length once read
		// (checkLocal); an inline one can be measured now.
		if a.Token.validate() == nil && a.Token.Value != "" && len(a.Token.Value) < minAdminTokenLength {
			errs = append(errs, configerr.At("admin.token", "shorter than %d characters", minAdminTokenLength))
		}
	case !local:
		errs = append(errs, configerr.At("admin.token", "required: admin.listen %q is not loopback-only, and /metrics, /pins and "+
			"the detail of /readyz reveal the configuration and tool inventory (/healthz and the status of /readyz stay open for probes)", a.Listen))
	}
	if a.Pprof && !local {
		errs = append(errs, configerr.At("admin.pprof", "on the admin listener %q: pprof is served on a loopback-only listener only", a.Listen))
	}
	return errs
}

// resolveToken reads admin.token, "" when none is configured. Errors name the source, never
// the value.
func (a AdminConfig) resolveToken(getenv func(string) string) (string, error) {
	if a.Token.IsZero() {
		return "", nil
	}
	v, err := a.Token.resolve(getenv)
	if err != nil {
		return "", fmt.Errorf("admin.token: %w", err)
	}
	if len(v) < minAdminTokenLength {
		return "", fmt.Errorf("admin.token: shorter than %d characters", minAdminTokenLength)
	}
	return v, nil
}
