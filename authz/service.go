package authz

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Service bundles what the gateway calls: the Authenticator, the Policy,
// the protected resource metadata and challenge construction.
type Service struct {
	auth        *Authenticator
	policy      *Policy
	metadata    ProtectedResourceMetadata
	metadataURL string
	dpop        *dpopState // nil when no issuer accepts DPoP-bound tokens
}

// ErrExplainInput is returned by Explain when neither a token nor claims are
// given.
var ErrExplainInput = errors.New("authz: explain needs a token or claims")

// New validates cfg and builds the Service. opts.ResourceURI is the
// gateway's canonical resource URI; it is the default audience and metadata
// resource.
func New(cfg Config, opts Options) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	auth, err := NewAuthenticator(cfg, opts)
	if err != nil {
		return nil, err
	}
	policy, err := NewPolicy(cfg.Policy, opts.Logger)
	if err != nil {
		return nil, err
	}
	policy.SetCaseInsensitive(opts.CaseInsensitive)
	st, err := newDPoPState(cfg, opts.DPoP)
	if err != nil {
		return nil, err
	}
	md := buildMetadata(cfg, opts.ResourceURI)
	dpopMetadata(&md, cfg, st)
	mdURL, err := MetadataURL(md.Resource)
	if err != nil {
		return nil, err
	}
	return &Service{auth: auth, policy: policy, metadata: md, metadataURL: mdURL, dpop: st}, nil
}

func buildMetadata(cfg Config, resourceURI string) ProtectedResourceMetadata {
	rm := cfg.ResourceMetadata
	md := ProtectedResourceMetadata{
		Resource:               rm.Resource,
		ScopesSupported:        slices.Clone(rm.ScopesSupported),
		BearerMethodsSupported: []string{"header"},
		ResourceName:           rm.ResourceName,
		ResourceDocumentation:  rm.ResourceDocumentation,
		ResourcePolicyURI:      rm.ResourcePolicyURI,
		ResourceTosURI:         rm.ResourceTosURI,
	}
	if md.Resource == "" {
		md.Resource = resourceURI
	}
	for _, is := range cfg.Issuers {
		md.AuthorizationServers = append(md.AuthorizationServers, is.Issuer)
	}
	return md
}

// Authenticator returns the token verifier.
func (s *Service) Authenticator() *Authenticator { return s.auth }

// Policy returns the compiled policy.
func (s *Service) Policy() *Policy { return s.policy }

// Authenticate is Authenticator().Authenticate.
func (s *Service) Authenticate(ctx context.Context, raw string) (*Principal, error) {
	return s.auth.Authenticate(ctx, raw)
}

// Decide is Policy().Decide.
func (s *Service) Decide(ctx context.Context, p *Principal, kind Kind, upstream, name string) Decision {
	return s.policy.Decide(ctx, p, kind, upstream, name)
}

// Visible is Policy().Visible.
func (s *Service) Visible(p *Principal, kind Kind, upstream, name string) bool {
	return s.policy.Visible(p, kind, upstream, name)
}

// Callable is Policy().Callable.
func (s *Service) Callable(p *Principal, kind Kind, upstream, name string) bool {
	return s.policy.Callable(p, kind, upstream, name)
}

// ValidUntil is Authenticator().ValidUntil.
func (s *Service) ValidUntil(p *Principal) time.Time { return s.auth.ValidUntil(p) }

// UntilRefused is Authenticator().UntilRefused.
func (s *Service) UntilRefused(ctx context.Context, p *Principal) (context.Context, context.CancelFunc) {
	return s.auth.UntilRefused(ctx, p)
}

// Reaches is Policy().Reaches.
func (s *Service) Reaches(p *Principal, upstream string) bool { return s.policy.Reaches(p, upstream) }

// Listing is Policy().Listing.
func (s *Service) Listing(p *Principal, kind Kind, upstream, name string) (bool, []string) {
	return s.policy.Listing(p, kind, upstream, name)
}

// Metadata returns the RFC 9728 document. The slices are fresh copies.
func (s *Service) Metadata() ProtectedResourceMetadata {
	md := s.metadata
	md.AuthorizationServers = slices.Clone(md.AuthorizationServers)
	md.ScopesSupported = slices.Clone(md.ScopesSupported)
	md.BearerMethodsSupported = slices.Clone(md.BearerMethodsSupported)
	md.DPoPSigningAlgValuesSupported = slices.Clone(md.DPoPSigningAlgValuesSupported)
	return md
}

// ScopesSupported is the metadata document's scopes_supported, the scope of a 401 challenge
// that no rule's scopes decide. Shared: do not modify.
func (s *Service) ScopesSupported() []string { return s.metadata.ScopesSupported }

// MetadataURL is the path-specific URL of the metadata document, as sent in
// challenges. Serve the document there and at RootMetadataURL(resource).
func (s *Service) MetadataURL() string { return s.metadataURL }

// Forbidden returns the 403 insufficient_scope challenge for a StepUp
// decision, naming every scope the deciding rule needs.
func (s *Service) Forbidden(d Decision) Challenge {
	return Challenge{
		Error:            ChallengeInsufficientScope,
		Scopes:           d.RequiredScopes,
		ResourceMetadata: s.metadataURL,
		Description:      fmt.Sprintf("This operation needs the scopes: %s", strings.Join(d.RequiredScopes, " ")),
	}
}

// ExplainRequest asks how the policy decides one item.
type ExplainRequest struct {
	// Token is a bearer token to verify; takes precedence over Claims.
	Token string
	// Claims are used as if from a verified token (scopes are expanded by
	// the hierarchy as usual). For admin what-if queries.
	Claims map[string]any
	// Kind, Upstream and Name identify the item, as for Decide.
	Kind     Kind
	Upstream string
	Name     string
}

// Explanation is the answer to Explain.
type Explanation struct {
	// Principal is the caller the decision was made for.
	Principal *Principal `json:"principal"`
	// Decision is what Decide would return.
	Decision Decision `json:"decision"`
	// Rules traces every rule in configuration order.
	Rules []RuleTrace `json:"rules"`
}

// Explain returns the decision for a token (verified as Authenticate does)
// or a claim set, with a trace of every rule, for an admin endpoint. It does
// not write to the decision log.
func (s *Service) Explain(ctx context.Context, req ExplainRequest) (Explanation, error) {
	var p *Principal
	switch {
	case req.Token != "":
		var err error
		if p, err = s.auth.Authenticate(ctx, req.Token); err != nil {
			return Explanation{}, err
		}
	case req.Claims != nil:
		p = s.auth.reader.principal(req.Claims)
	default:
		return Explanation{}, ErrExplainInput
	}
	return Explanation{
		Principal: p,
		Decision:  s.policy.evaluate(p, req.Kind, req.Upstream, req.Name),
		Rules:     s.policy.trace(p, req.Kind, req.Upstream, req.Name),
	}, nil
}
