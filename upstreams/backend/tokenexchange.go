package backend

// ExchangesTokens reports whether b is configured for RFC 8693 token exchange, the one case in
// which the caller's verified token must be passed as Call.SubjectToken. The gateway passes it
// to no other backend.
func (b *Backend) ExchangesTokens() bool {
	return b.creds != nil && b.creds.cfg.Type == AuthTokenExchange
}

// SubjectFor returns the caller's token for a request to b: token when b exchanges tokens, else
// "", so the caller's token is not held by a request to any other backend.
func (b *Backend) SubjectFor(token string) string {
	if !b.ExchangesTokens() {
		return ""
	}
	return token
}
