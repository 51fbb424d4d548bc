package dpop

import "errors"

// Error codes of a DPoP challenge (RFC 9449 §7.1, §9, §12.2).
const (
	// CodeInvalidProof is any failed check of a proof, a missing or duplicated header included.
	CodeInvalidProof = "invalid_dpop_proof"
	// CodeUseNonce asks the client to retry with the nonce sent in DPoP-Nonce.
	CodeUseNonce = "use_dpop_nonce"
)

// Reasons a proof is refused: a closed set, safe as a metric label.
const (
	ReasonHeader    = "header"    // missing, or more than one DPoP header
	ReasonMalformed = "malformed" // not a compact JWS of JSON objects without duplicate members
	ReasonType      = "type"      // typ is not dpop+jwt
	ReasonAlgorithm = "algorithm" // alg not an accepted asymmetric algorithm
	ReasonKey       = "key"       // jwk missing, private, invalid or not suiting alg
	ReasonSignature = "signature" // the signature does not verify
	ReasonClaims    = "claims"    // a required claim missing or of the wrong type
	ReasonMethod    = "htm"       // htm is not the request's method
	ReasonURL       = "htu"       // htu is not the endpoint's URL
	ReasonNonce     = "nonce"     // nonce missing, expired or not the server's
	ReasonTime      = "iat"       // iat outside the window
	ReasonTokenHash = "ath"       // ath missing or not the token's hash
)

// Sentinels an *Error matches with errors.Is, by its Code.
var (
	// ErrInvalidProof matches an *Error with CodeInvalidProof.
	ErrInvalidProof = errors.New("dpop: invalid proof")
	// ErrUseNonce matches an *Error with CodeUseNonce.
	ErrUseNonce = errors.New("dpop: nonce required")
)

// Error is a refused proof. Description is a fixed text per check, safe in a response header:
// nothing of the proof or token is in it.
type Error struct {
	// Code is CodeInvalidProof or CodeUseNonce.
	Code string
	// Reason is one of the Reason constants.
	Reason string
	// Description is the error_description of the challenge.
	Description string
}

func (e *Error) Error() string { return "dpop: " + e.Code + ": " + e.Reason + ": " + e.Description }

// Is matches ErrInvalidProof or ErrUseNonce by Code.
func (e *Error) Is(target error) bool {
	return target == ErrInvalidProof && e.Code == CodeInvalidProof || target == ErrUseNonce && e.Code == CodeUseNonce
}

func proofError(reason, description string) *Error {
	return &Error{Code: CodeInvalidProof, Reason: reason, Description: description}
}

// HeaderError is the error of a request with no DPoP header, or more than one, for a caller that
// reads the headers itself (RFC 9449 §4.3 step 1).
func HeaderError(n int) error {
	if n == 0 {
		return proofError(ReasonHeader, "the request has no DPoP proof")
	}
	return proofError(ReasonHeader, "the request has more than one DPoP header")
}
