package devissuer

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"text/template"
	"time"
)

// Defaults of Command.
const (
	// CommandAddr is where `gateway-demo issuer` listens unless told otherwise.
	CommandAddr = "127.0.0.1:9400"
	// CommandTTL is the lifetime of the tokens it mints unless told otherwise: a working day.
	CommandTTL = 8 * time.Hour
	// maxMintTTL bounds the lifetime a /mint request may ask for.
	maxMintTTL = 7 * 24 * time.Hour
)

// Command is `gateway-demo issuer`: a development issuer on a fixed loopback address, for
// trying a gateway configuration of one's own (`gateway serve`) without an identity provider.
// It serves discovery and the key set, prints the configuration to trust it and one token, and
// mints more on request (POST /mint) until ctx ends. Its keys live in memory: tokens stop
// verifying when it stops.
func Command(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("gateway-demo issuer", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", CommandAddr, "loopback `address` to serve discovery, the key set and /mint on")
	audience := fs.String("audience", "", "the gateway's server.publicURL: the `URL` tokens are issued for (required)")
	sub := fs.String("sub", DefaultSubject, "`subject` of the printed token")
	scope := fs.String("scope", "", "space-separated `scopes` of the printed token")
	groups := fs.String("groups", "", "comma-separated `groups` of the printed token")
	ttl := fs.Duration("ttl", CommandTTL, "`lifetime` of the tokens")
	clients := map[string]WebClient{}
	fs.Func("client", "a sign-in client `ID=REDIRECT_URI` (repeatable): the gateway's approval page, which per-user OAuth's connect pages sign in with too; its redirect URI is the page's base URL + /approval/callback", func(v string) error {
		id, uri, ok := strings.Cut(v, "=")
		if u, err := url.Parse(uri); !ok || id == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return errors.New("want ID=REDIRECT_URI, such as gateway-pages=https://127.0.0.1:8443/approval/callback")
		}
		c := clients[id]
		c.RedirectURIs = append(c.RedirectURIs, uri)
		clients[id] = c
		return nil
	})
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "usage: gateway-demo issuer --audience URL [flags]\n\n"+
			"A DEVELOPMENT-ONLY token issuer on loopback: it signs any token it is asked for.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	case *audience == "":
		return errors.New("--audience is required: the gateway's server.publicURL, which its tokens must name")
	case *ttl <= 0 || *ttl > maxMintTTL:
		return fmt.Errorf("--ttl %s: want more than 0 and at most %s", *ttl, maxMintTTL)
	}
	claims := Claims{"sub": *sub}
	addClaims(claims, *scope, *groups)
	opts := Options{Addr: *listen, Audience: *audience, TTL: *ttl, MintEndpoint: true}
	if len(clients) > 0 {
		// The sign-in form knows one user: the subject of the printed token, so the person who
		// approves a call is the caller who made it.
		opts.WebClients, opts.Users = clients, map[string]Claims{*sub: withoutSub(claims)}
	}
	iss, err := New(opts)
	if err != nil {
		return err
	}
	defer iss.Close()
	tok, err := iss.Mint(claims)
	if err != nil {
		return err
	}
	if err := commandText.Execute(stdout, commandView{URL: iss.URL(), MintURL: iss.MintURL(), Audience: *audience,
		Sub: *sub, Scope: *scope, Scopes: strings.Fields(*scope), Groups: *groups, TTL: *ttl, Token: tok,
		Clients: slices.Sorted(maps.Keys(clients))}); err != nil {
		return err
	}
	<-ctx.Done()
	return nil
}

// withoutSub is c without its sub claim: the claims a signed-in user's tokens carry besides.
func withoutSub(c Claims) Claims {
	out := maps.Clone(c)
	delete(out, "sub")
	return out
}

// addClaims sets the scope and groups claims when given.
func addClaims(c Claims, scope, groups string) {
	if s := strings.Join(strings.Fields(scope), " "); s != "" {
		c["scope"] = s
	}
	var gs []string
	for _, g := range strings.Split(groups, ",") {
		if g = strings.TrimSpace(g); g != "" {
			gs = append(gs, g)
		}
	}
	if len(gs) > 0 {
		c["groups"] = gs
	}
}

type commandView struct {
	URL, MintURL, Audience, Sub, Scope, Groups, Token string
	Scopes                                            []string // Scope's fields
	TTL                                               time.Duration
	Clients                                           []string
}

var commandText = template.Must(template.New("issuer").Parse(`
################################################################################
##  DEVELOPMENT ONLY: this issuer signs ANY token it is asked for, with keys  ##
##  kept in memory. Never let a gateway that serves real users trust it.      ##
################################################################################

issuer   {{.URL}}   (discovery: {{.URL}}/.well-known/openid-configuration)
audience {{.Audience}}

Trust it in the gateway's configuration (server.publicURL must be the audience above), with a
rule that lets its tokens in (anything no rule allows is denied; the README's "Policy" says more):

  server:
    publicURL: {{.Audience}}
  auth:
    issuers:
      - issuer: {{.URL}}
    policy:
      rules:
        - { id: dev-issuer, issuers: [{{printf "%q" .URL}}]{{if .Scopes}}, anyScope: [{{range $i, $s := .Scopes}}{{if $i}}, {{end}}{{printf "%q" $s}}{{end}}]{{end}} }
{{- if .Clients}}
  approval:
    clientID: {{index .Clients 0}}
{{- end}}
{{if .Clients}}
It also signs users in for the approval page (and per-user OAuth's connect pages): the
sign-in form asks for no password and knows one user, {{.Sub}}.
{{end}}
A token for sub={{.Sub}}{{if .Scope}} scope="{{.Scope}}"{{end}}{{if .Groups}} groups={{.Groups}}{{end}}, valid {{.TTL}}:

  export TOKEN='{{.Token}}'

More tokens while this runs (sub, scope, groups and ttl are all optional):

  curl -s {{.MintURL}} -d sub=bob{{with .Scopes}} -d scope='{{index . 0}}'{{end}} -d groups=sre -d ttl=1h

They stop verifying when this process ends (its keys are not saved). Ctrl-C to stop.
`))

// mintFields are the fields /mint reads, each at most once.
const mintFields = "sub, scope, groups, ttl"

// mintFormProblem says what is wrong with a /mint request's fields (all of them, form holding
// the query's too, and those of its body, post), or "" when nothing is: a field it does not
// read (a misspelt "scopes", a claim it does not set), one given twice or in the query string
// is refused rather than dropped, since a token without what was asked for would show only
// as a refusal at the gateway.
func mintFormProblem(form, post url.Values) string {
	for _, k := range slices.Sorted(maps.Keys(form)) {
		switch {
		case !slices.Contains(strings.Split(mintFields, ", "), k):
			return fmt.Sprintf("%q: not a field /mint reads (%s)", k, mintFields)
		case len(post[k]) != len(form[k]):
			return fmt.Sprintf("%q: send the fields as a form body (curl -d), not in the URL", k)
		case len(form[k]) > 1:
			return fmt.Sprintf("%q: given %d times, want it once", k, len(form[k]))
		}
	}
	return ""
}

// serveMint signs a token for the subject, scopes and groups of a form, without any
// credential: it exists only behind Options.MintEndpoint, on loopback. A request from a web
// page (one carrying Origin) is refused, so a site the developer visits cannot mint tokens.
func (i *Issuer) serveMint(w http.ResponseWriter, r *http.Request) {
	if len(r.Header.Values("Origin")) > 0 {
		writeJSON(w, http.StatusForbidden, map[string]string{"error": "access_denied", "error_description": "not for browsers"})
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
		return
	}
	if why := mintFormProblem(r.Form, r.PostForm); why != "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request", "error_description": why})
		return
	}
	ttl := i.opts.TTL
	if v := r.PostForm.Get("ttl"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 || d > maxMintTTL {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request", "error_description": "ttl: a duration up to 168h"})
			return
		}
		ttl = d
	}
	claims := Claims{"exp": i.opts.Now().Add(ttl).Unix()}
	if sub := r.PostForm.Get("sub"); sub != "" {
		claims["sub"] = sub
	}
	addClaims(claims, r.PostForm.Get("scope"), r.PostForm.Get("groups"))
	tok, err := i.Mint(claims)
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "server_error"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": int(ttl.Seconds())})
}
