package dpop

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// Names and bounds of the protocol.
const (
	// Header is the request header carrying the proof (RFC 9449 §4.1).
	Header = "DPoP"
	// NonceHeader is the response header carrying a server nonce (RFC 9449 §8).
	NonceHeader = "DPoP-Nonce"
	// Scheme is the Authorization scheme of a DPoP-bound token (RFC 9449 §7.1).
	Scheme = "DPoP"
	// ProofType is the typ of every proof (RFC 9449 §4.2).
	ProofType = "dpop+jwt"
	// MaxProofBytes bounds the work done on a proof before any check: far above a proof with
	// a 4096-bit RSA key.
	MaxProofBytes = 8 << 10
	// MaxWindow is the widest iat window MCP allows (SEP-1932: within 5 minutes of the server's
	// time); a stricter one may be configured.
	MaxWindow = 5 * time.Minute
	// DefaultWindow is the iat window when none is configured.
	DefaultWindow = MaxWindow
	// maxJTIBytes bounds the jti a replay cache is asked to remember (it stores a hash).
	maxJTIBytes = 512
	// MinRSABits is the smallest RSA key a proof, or a token, is verified with: RFC 7518 §3.3
	// and §3.5 require 2048 bits or more of RS* and PS* keys.
	MinRSABits = 2048
	// MaxRSABits is the largest RSA key a proof is verified with. Verifying costs about the
	// square of the modulus, and a proof is verified before its token is (and, for a token
	// verified before, even for a client whose failures limit it to such tokens): a 16384-bit
	// key, which fits in MaxProofBytes, costs about a hundred times a 2048-bit one. go-jose
	// refuses keys over 4096 bits too, but by a package variable anything may raise; this bound
	// is the verifier's own.
	MaxRSABits = 4096
)

// DefaultAlgorithms are the JWS algorithms proofs may use when none are configured: every
// registered asymmetric one, with Ed25519 both as EdDSA and under its fully-specified name
// (RFC 9864), which current clients send. "none" and the HMAC algorithms never are: a proof
// proves possession of a private key, which a shared secret cannot.
func DefaultAlgorithms() []string {
	return []string{"ES256", "ES384", "ES512", "PS256", "PS384", "PS512", "RS256", "RS384", "RS512", "EdDSA", algEd25519}
}

// algEd25519 is the fully-specified JWS algorithm for Ed25519 (RFC 9864), which go-jose does
// not know: it is verified here.
const algEd25519 = "Ed25519"

// Asymmetric reports whether alg is one of DefaultAlgorithms.
func Asymmetric(alg string) bool { return slices.Contains(DefaultAlgorithms(), alg) }

// Request is what a proof is checked against.
type Request struct {
	// Method is the HTTP method of the request (htm).
	Method string
	// URL is the endpoint's public URL in NormalizeURL form (htu).
	URL string
	// AccessToken is the token the request presents; "" at a token endpoint, where the proof
	// has no ath.
	AccessToken string
	// TokenSum, when not nil, is the SHA-256 of AccessToken the caller has already computed
	// (a token cache's key), so the token is not hashed a second time for ath.
	TokenSum *[sha256.Size]byte
	// Now is the server's time.
	Now time.Time
}

// Proof is what a verified proof says.
type Proof struct {
	// JKT is the base64url SHA-256 JWK thumbprint (RFC 7638) of the proof's key: a bound token's
	// cnf.jkt must equal it.
	JKT string
	// JTI is the proof's unique identifier.
	JTI string
	// IssuedAt is the proof's iat.
	IssuedAt time.Time
	// NonceIssued is when the server issued the nonce the proof carries; zero when the proof
	// carries none or nonces are not checked.
	NonceIssued time.Time
}

// Config configures a Verifier.
type Config struct {
	// Algorithms are the JWS algorithms accepted; each must be Asymmetric. Default
	// DefaultAlgorithms().
	Algorithms []string
	// Window is how far iat may lie from the server's time, either way. Default DefaultWindow;
	// at most MaxWindow.
	Window time.Duration
	// Nonces, when set, makes a nonce from it required in every proof (RFC 9449 §8).
	Nonces *Nonces
}

// Verifier checks proofs. It is immutable and safe for concurrent use.
type Verifier struct {
	algs   []string
	window time.Duration
	nonces *Nonces
}

// NewVerifier validates cfg and builds a Verifier.
func NewVerifier(cfg Config) (*Verifier, error) {
	algs := cfg.Algorithms
	if len(algs) == 0 {
		algs = DefaultAlgorithms()
	}
	for _, a := range algs {
		if !Asymmetric(a) {
			return nil, fmt.Errorf("dpop: algorithm %q is not an asymmetric JWS algorithm", a)
		}
	}
	w := cfg.Window
	if w == 0 {
		w = DefaultWindow
	}
	if w < time.Second || w > MaxWindow {
		return nil, fmt.Errorf("dpop: window %s: want 1s to %s", w, MaxWindow)
	}
	return &Verifier{algs: slices.Clone(algs), window: w, nonces: cfg.Nonces}, nil
}

// Algorithms are the accepted algorithms, for the algs challenge parameter and metadata.
func (v *Verifier) Algorithms() []string { return slices.Clone(v.algs) }

// Window is the iat window.
func (v *Verifier) Window() time.Duration { return v.window }

// Nonces are the verifier's nonces; nil when none are required.
func (v *Verifier) Nonces() *Nonces { return v.nonces }

// header is the JOSE header of a proof as read before the signature is checked.
type header struct {
	Typ  *string         `json:"typ"`
	Alg  string          `json:"alg"`
	JWK  json.RawMessage `json:"jwk"`
	Crit json.RawMessage `json:"crit"`
}

// claims are a proof's claims; pointers tell absent from empty.
type claims struct {
	JTI   *string         `json:"jti"`
	HTM   *string         `json:"htm"`
	HTU   *string         `json:"htu"`
	IAT   json.RawMessage `json:"iat"`
	ATH   *string         `json:"ath"`
	Nonce *string         `json:"nonce"`
}

// Verify checks raw, the one DPoP header value of a request, against req (RFC 9449 §4.3, in
// order). Errors are *Error: CodeInvalidProof, or CodeUseNonce when a nonce is required and
// missing, expired or not the server's.
func (v *Verifier) Verify(raw string, req Request) (*Proof, error) {
	return v.verify(raw, req, true)
}

// VerifyAgain is Verify for a proof that passed Verify when its request came, judged again
// later (a long-lived request whose server configuration changed): every check but those of
// its freshness, the nonce and iat, which no proof passes for long.
func (v *Verifier) VerifyAgain(raw string, req Request) (*Proof, error) {
	return v.verify(raw, req, false)
}

// verify is Verify, the nonce and iat checked only when fresh.
func (v *Verifier) verify(raw string, req Request, fresh bool) (*Proof, error) {
	jwk, payload, err := v.verifySignature(raw)
	if err != nil {
		return nil, err
	}
	c, err := readClaims(payload)
	if err != nil {
		return nil, err
	}
	p := &Proof{JTI: *c.JTI}
	if err := v.checkRequest(c, req); err != nil {
		return nil, err
	}
	if fresh {
		if p.NonceIssued, err = v.checkNonce(c, req.Now); err != nil {
			return nil, err
		}
		if p.IssuedAt, err = v.checkTime(c.IAT, req.Now); err != nil {
			return nil, err
		}
	}
	if req.AccessToken != "" {
		if c.ATH == nil {
			return nil, proofError(ReasonTokenHash, "the proof has no ath for the access token")
		}
		if !athMatches(*c.ATH, req) {
			return nil, proofError(ReasonTokenHash, "the proof's ath is not the hash of the access token")
		}
	}
	if p.JKT, err = Thumbprint(jwk); err != nil {
		return nil, proofError(ReasonKey, "the proof's jwk has no thumbprint")
	}
	return p, nil
}

// verifySignature reads the header, checks typ, alg and the jwk, each with its own error, before
// any cryptography, then verifies the signature with the jwk and returns it and the payload.
func (v *Verifier) verifySignature(raw string) (*jose.JSONWebKey, []byte, error) {
	h, err := v.readHeader(raw)
	if err != nil {
		return nil, nil, err
	}
	if h.Alg == algEd25519 {
		return verifyEd25519(raw, h.JWK)
	}
	jws, err := jose.ParseSignedCompact(raw, []jose.SignatureAlgorithm{jose.SignatureAlgorithm(h.Alg)})
	if err != nil || len(jws.Signatures) != 1 || jws.Signatures[0].Header.JSONWebKey == nil {
		return nil, nil, proofError(ReasonKey, "the proof's jwk is not a valid public key")
	}
	jwk := jws.Signatures[0].Header.JSONWebKey
	if err := checkKey(jwk, h.Alg); err != nil {
		return nil, nil, err
	}
	payload, err := jws.Verify(jwk)
	if err != nil {
		return nil, nil, badSignature()
	}
	return jwk, payload, nil
}

func badSignature() error {
	return proofError(ReasonSignature, "the proof's signature does not verify with its jwk")
}

// verifyEd25519 verifies a proof signed with the fully-specified Ed25519 algorithm (RFC 9864),
// the way go-jose verifies EdDSA: the jwk must be an OKP Ed25519 public key.
func verifyEd25519(raw string, rawJWK json.RawMessage) (*jose.JSONWebKey, []byte, error) {
	var jwk jose.JSONWebKey
	if err := jwk.UnmarshalJSON(rawJWK); err != nil || !jwk.Valid() || !jwk.IsPublic() {
		return nil, nil, proofError(ReasonKey, "the proof's jwk is not a valid public key")
	}
	pub, ok := jwk.Key.(ed25519.PublicKey)
	if !ok {
		return nil, nil, proofError(ReasonKey, "the proof's jwk does not suit its alg")
	}
	dot := strings.LastIndexByte(raw, '.')
	sig, err := base64.RawURLEncoding.Strict().DecodeString(raw[dot+1:])
	if err != nil || !ed25519.Verify(pub, []byte(raw[:dot]), sig) {
		return nil, nil, badSignature()
	}
	first := strings.IndexByte(raw, '.')
	payload, err := base64.RawURLEncoding.Strict().DecodeString(raw[first+1 : dot])
	if err != nil {
		return nil, nil, proofError(ReasonMalformed, "the proof's claims are not a JSON object")
	}
	return &jwk, payload, nil
}

// readHeader reads and checks a proof's JOSE header.
func (v *Verifier) readHeader(raw string) (header, error) {
	var h header
	if raw == "" {
		return h, proofError(ReasonHeader, "the request has no DPoP proof")
	}
	if len(raw) > MaxProofBytes {
		return h, proofError(ReasonMalformed, "the DPoP proof is too large")
	}
	seg, _, _ := strings.Cut(raw, ".")
	if strings.Count(raw, ".") != 2 {
		return h, proofError(ReasonMalformed, "the DPoP proof is not a compact JWS")
	}
	if err := decodeStrict(seg, &h, headerNames); errors.Is(err, errNameCase) {
		return h, proofError(ReasonMalformed, "the proof's header has a parameter named as a checked one in another case")
	} else if err != nil {
		return h, proofError(ReasonMalformed, "the DPoP proof's header is not a JSON object")
	}
	switch {
	case h.Typ == nil || *h.Typ != ProofType:
		return h, proofError(ReasonType, "the proof's typ is not dpop+jwt")
	case !slices.Contains(v.algs, h.Alg):
		return h, proofError(ReasonAlgorithm, "the proof's alg is not an accepted asymmetric algorithm")
	case len(h.JWK) == 0 || string(h.JWK) == "null":
		return h, proofError(ReasonKey, "the proof's header has no jwk")
	case hasPrivateMembers(h.JWK):
		return h, proofError(ReasonKey, "the proof's jwk holds private key material")
	case h.Crit != nil:
		// No extension of a proof is understood here (RFC 7515 §4.1.11).
		return h, proofError(ReasonMalformed, "the proof names critical header parameters")
	}
	return h, nil
}

// The member names a proof's header and claims are read by: exactly these (headerNames,
// claimNames), never another spelling.
var (
	headerNames = []string{"typ", "alg", "jwk", "crit"}
	claimNames  = []string{"jti", "htm", "htu", "iat", "ath", "nonce"}
)

// decodeStrict decodes one base64url segment holding a JSON object, refusing duplicate members
// and members whose names differ from one of names only in case (exactNames): parsers disagree
// on which one wins, and the header read here must be the one go-jose verifies.
func decodeStrict(seg string, v any, names []string) error {
	b, err := base64.RawURLEncoding.Strict().DecodeString(seg)
	if err != nil {
		return err
	}
	return unmarshalStrict(b, v, names)
}

func unmarshalStrict(b []byte, v any, names []string) error {
	if err := jsonrpc.Scan(b, jsonrpc.Limits{MaxDepth: 8}); err != nil {
		return err
	}
	if err := exactNames(b, names); err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

var errNameCase = errors.New("dpop: a member's name differs from a checked one only in case")

// exactNames refuses an object (scanned) with a member whose name is not one of names but
// equals one of them under case folding ("TYP", "Htu", "\u017Fti"): encoding/json would read it
// as that member, where go-jose, and JWT (RFC 7519 §4: names are case-sensitive), would not.
func exactNames(obj []byte, names []string) error {
	return jsonrpc.Members(obj, func(k, _ []byte) error {
		for _, n := range names {
			if string(k) != n && strings.EqualFold(string(k), n) {
				return errNameCase
			}
		}
		return nil
	})
}

// privateMembers are the JWK members of private or symmetric keys (RFC 7518 §6.2.2, §6.3.2,
// §6.4; RFC 8037 §2).
var privateMembers = []string{"d", "p", "q", "dp", "dq", "qi", "oth", "k"}

func hasPrivateMembers(jwk json.RawMessage) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(jwk, &m) != nil {
		return false // not an object: go-jose refuses it
	}
	for _, name := range privateMembers {
		if _, ok := m[name]; ok {
			return true
		}
	}
	return false
}

// checkKey refuses a key that does not suit alg, and RSA keys under MinRSABits or over
// MaxRSABits, before the signature is verified.
func checkKey(jwk *jose.JSONWebKey, alg string) error {
	ok := false
	switch k := jwk.Key.(type) {
	case *ecdsa.PublicKey:
		ok = strings.HasPrefix(alg, "ES") && k.Curve.Params().BitSize == map[string]int{"ES256": 256, "ES384": 384, "ES512": 521}[alg]
	case *rsa.PublicKey:
		ok = (strings.HasPrefix(alg, "RS") || strings.HasPrefix(alg, "PS")) && k.N.BitLen() >= MinRSABits && k.N.BitLen() <= MaxRSABits
	case ed25519.PublicKey:
		ok = alg == "EdDSA"
	}
	if !ok {
		return proofError(ReasonKey, "the proof's jwk does not suit its alg")
	}
	return nil
}

func readClaims(payload []byte) (claims, error) {
	var c claims
	if err := unmarshalStrict(payload, &c, claimNames); errors.Is(err, errNameCase) {
		return c, proofError(ReasonMalformed, "the proof has a claim named as a checked one in another case")
	} else if err != nil {
		return c, proofError(ReasonMalformed, "the proof's claims are not a JSON object")
	}
	switch {
	case c.JTI == nil || *c.JTI == "" || len(*c.JTI) > maxJTIBytes:
		return c, proofError(ReasonClaims, "the proof has no jti")
	case c.HTM == nil:
		return c, proofError(ReasonClaims, "the proof has no htm")
	case c.HTU == nil:
		return c, proofError(ReasonClaims, "the proof has no htu")
	case len(c.IAT) == 0 || string(c.IAT) == "null":
		return c, proofError(ReasonClaims, "the proof has no iat")
	}
	return c, nil
}

// checkRequest compares htm and htu with the request (RFC 9449 §4.3 steps 8 and 9). htu is
// compared "ignoring any query and fragment parts" (step 9), on both sides: a client that
// sends the full target URI, query and all, as some do though §4.2 says to leave them out,
// is not refused, and nothing but the scheme, host, port and path is ever compared.
func (v *Verifier) checkRequest(c claims, req Request) error {
	if *c.HTM != req.Method {
		return proofError(ReasonMethod, "the proof's htm is not the request's method")
	}
	htu, err := NormalizeURL(withoutQuery(*c.HTU))
	if err != nil || htu != withoutQuery(req.URL) {
		return proofError(ReasonURL, "the proof's htu is not this endpoint's URL")
	}
	return nil
}

// checkNonce checks the nonce when nonces are required (RFC 9449 §4.3 step 10, §9).
func (v *Verifier) checkNonce(c claims, now time.Time) (time.Time, error) {
	if v.nonces == nil {
		return time.Time{}, nil
	}
	if c.Nonce == nil {
		return time.Time{}, &Error{Code: CodeUseNonce, Reason: ReasonNonce, Description: "Resource server requires nonce in DPoP proof"}
	}
	issued, ok := v.nonces.Check(*c.Nonce, now)
	if !ok {
		return time.Time{}, &Error{Code: CodeUseNonce, Reason: ReasonNonce, Description: "The DPoP proof's nonce is not valid or has expired"}
	}
	return issued, nil
}

// checkTime checks iat against the window (RFC 9449 §4.3 step 11; SEP-1932: ±5 minutes).
// iat is a JSON number (a NumericDate, RFC 7519 §2), never a string holding one.
func (v *Verifier) checkTime(n json.RawMessage, now time.Time) (time.Time, error) {
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || n[0] == '"' || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || f > math.MaxInt32*4 {
		return time.Time{}, proofError(ReasonClaims, "the proof's iat is not a NumericDate")
	}
	iat := time.Unix(int64(f), int64((f-math.Floor(f))*1e9))
	if d := now.Sub(iat); d > v.window || d < -v.window {
		return time.Time{}, proofError(ReasonTime, "the proof's iat is outside the accepted window")
	}
	return iat, nil
}

// TokenHash is the ath of a proof for token: base64url(SHA-256(ASCII token)) (RFC 9449 §4.2).
func TokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// athMatches reports whether ath is the hash of req's access token (TokenHash), from
// req.TokenSum when the caller has it, in constant time and without allocating.
func athMatches(ath string, req Request) bool {
	var sum [sha256.Size]byte
	if req.TokenSum != nil {
		sum = *req.TokenSum
	} else {
		sum = sha256.Sum256([]byte(req.AccessToken))
	}
	var want [athLen]byte
	base64.RawURLEncoding.Encode(want[:], sum[:])
	return len(ath) == athLen && subtle.ConstantTimeCompare([]byte(ath), want[:]) == 1
}

// athLen is the length of an ath: unpadded base64url of a SHA-256.
const athLen = (sha256.Size*8 + 5) / 6

// Thumbprint is the base64url SHA-256 JWK thumbprint (RFC 7638) of a public key, the value of a
// bound token's cnf.jkt (RFC 9449 §6.1).
func Thumbprint(jwk *jose.JSONWebKey) (string, error) {
	b, err := jwk.Thumbprint(crypto.SHA256)
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}
