package useroauth

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"time"

	"github.com/mcp-gateway/gateway/internal/seal"
	"github.com/mcp-gateway/gateway/internal/vault"
)

// flowCookiePrefix names a browser's authorization round trip to one backend's server: one
// cookie per backend, so two connects in one browser do not overwrite each other. The __Host-
// prefix keeps a sibling host from setting it (webpage).
const flowCookiePrefix = "__Host-mcpgw_connect_"

// link is what a connect link a call hands out says: whose call asked, for which backend, until
// when. It is sealed into the link's path: no state is kept for it, it names nobody in clear,
// and it grants nothing (the page signs the user in and refuses anyone but this caller).
type link struct {
	Issuer  string    `json:"iss"`
	Subject string    `json:"sub"`
	Backend string    `json:"be"`
	ID      string    `json:"id"`
	Expiry  time.Time `json:"exp"`
}

// state is the OAuth state parameter of one authorization round trip (RFC 6749 §10.12), sealed:
// the caller and backend the tokens are for, the authorization server and client it went to,
// the scope it asked (granted when the token answer names none, RFC 6749 §5.1, whatever the
// callback's replica would ask now), and a nonce that is used once and ties it to the browser's
// flow cookie.
type state struct {
	Issuer     string `json:"iss"`
	Subject    string `json:"sub"`
	Backend    string `json:"be"`
	AuthServer string `json:"as"`
	ClientID   string `json:"cid"`
	// Scope is nil in a state sealed before states carried it.
	Scope  *string   `json:"sc"`
	Nonce  string    `json:"n"`
	Expiry time.Time `json:"exp"`
}

// flow is what the browser keeps of its round trip, sealed into its flow cookie: the nonce its
// state carries and the PKCE verifier, which never leaves the gateway and the browser.
type flow struct {
	Nonce    string    `json:"n"`
	Verifier string    `json:"v"`
	Expiry   time.Time `json:"exp"`
}

// Link returns the connect page's URL for who and backend, and its id (for a client's
// elicitationId and the logs), valid for ConsentTTL.
func (s *Service) Link(who vault.Caller, backend string) (pageURL, id string, err error) {
	if !s.PerUser(backend) {
		return "", "", errors.New("useroauth: not a per-user backend")
	}
	l := link{Issuer: who.Issuer, Subject: who.Subject, Backend: backend, ID: rand.Text(), Expiry: s.now().Add(s.cfg.ConsentTTL)}
	tok, err := sealJSON(s.links, l)
	if err != nil {
		return "", "", err
	}
	return s.deps.BaseURL + s.cfg.Path + "/l/" + tok, l.ID, nil
}

// openLink opens a link token; expired reports a link that opened but is past its expiry.
func (s *Service) openLink(tok string) (l *link, expired bool, ok bool) {
	var v link
	if openJSON(s.links, tok, &v) != nil || !s.PerUser(v.Backend) {
		return nil, false, false
	}
	return &v, !s.now().Before(v.Expiry), true
}

func sealJSON(sealer *seal.Sealer, v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return sealer.Seal(b)
}

func openJSON(sealer *seal.Sealer, tok string, v any) error {
	pt, err := sealer.Open(tok)
	if err != nil {
		return err
	}
	return json.Unmarshal(pt, v)
}
