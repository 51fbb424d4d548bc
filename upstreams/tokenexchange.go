package upstreams

// ExchangesTokens reports whether the named backend is configured for RFC 8693 token exchange,
// the one case in which the caller's verified token must be passed as Call.SubjectToken. The
// gateway passes it to no other backend.
func (r *Registry) ExchangesTokens(upstream string) bool {
	b, ok := r.byName[upstream]
	return ok && b.creds != nil && b.creds.cfg.Type == AuthTokenExchange
}

// AnyExchangesTokens reports whether some backend uses token exchange, so a list (which fans out
// to every backend) needs ListRequest.SubjectToken.
func (r *Registry) AnyExchangesTokens() bool {
	for _, b := range r.backends {
		if b.creds != nil && b.creds.cfg.Type == AuthTokenExchange {
			return true
		}
	}
	return false
}

// exchanges reports whether b is configured for token exchange.
func (b *backend) exchangesTokens() bool {
	return b.creds != nil && b.creds.cfg.Type == AuthTokenExchange
}

// subjectFor returns the caller's token for a request to b: token when b exchanges tokens, else
// "", so the caller's token is not held by a request to any other backend.
func (b *backend) subjectFor(token string) string {
	if !b.exchangesTokens() {
		return ""
	}
	return token
}
