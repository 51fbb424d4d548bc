package mcphttp

import (
	"github.com/mcp-gateway/gateway/upstreams"
)

// authenticate is stage 5. Until an authenticator is configured every caller is anonymous.
func (s *Server) authenticate(x *exchange) error { return nil }

// authorize is stage 7: may this caller use target?
func (s *Server) authorize(x *exchange, kind upstreams.Kind, target upstreams.Target) error {
	return nil
}

// visibility returns the list filter for this caller and whether it depends on identity.
func (s *Server) visibility(x *exchange) (func(upstreams.Kind, upstreams.Target) bool, bool) {
	return nil, false
}
