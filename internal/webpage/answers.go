package webpage

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// maxIssuerAnswerBytes bounds every answer the sign-in reads from its issuer (discovery, key
// set, token endpoint), as token verification bounds its key sets.
const maxIssuerAnswerBytes = 1 << 20

// errAnswerTooLarge is an issuer's answer over maxIssuerAnswerBytes.
var errAnswerTooLarge = fmt.Errorf("the issuer's answer is over %d bytes", maxIssuerAnswerBytes)

// boundedTransport is the sign-in client's transport. go-oidc reads a discovery document or
// key set whole, however large, and puts a failed answer's body into its error, which the page
// logs: each body here ends in an error past maxIssuerAnswerBytes, and a failed GET's body (the
// server's text; its status says what failed) is not passed on. CloseIdleConnections is the
// embedded transport's.
type boundedTransport struct {
	*http.Transport
}

// RoundTrip sends r on the embedded transport and bounds the answer.
func (t boundedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.Transport.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	if r.Method == http.MethodGet && (resp.StatusCode < 200 || resp.StatusCode > 299) {
		_ = resp.Body.Close()
		resp.Body, resp.ContentLength = http.NoBody, 0
		return resp, nil
	}
	resp.Body = &boundedBody{ReadCloser: resp.Body, left: maxIssuerAnswerBytes}
	return resp, nil
}

// boundedBody reads at most left bytes of its body; a byte more is errAnswerTooLarge.
type boundedBody struct {
	io.ReadCloser
	left int64
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if b.left <= 0 {
		// One byte more tells an answer of exactly the bound from a larger one.
		var one [1]byte
		n, err := b.ReadCloser.Read(one[:])
		if n > 0 {
			return 0, errAnswerTooLarge
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}

// refusal is the token endpoint's refusal of a code for the log: its status and error code
// (kept to the characters of one), never its description or body, which a server may fill
// with what it was sent.
func refusal(e *oauth2.RetrieveError) error {
	status := 0
	if e.Response != nil {
		status = e.Response.StatusCode
	}
	code := e.ErrorCode
	if code == "" || len(code) > 64 || strings.IndexFunc(code, func(r rune) bool {
		return (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (r < '0' || r > '9') && !strings.ContainsRune("_.:-", r)
	}) >= 0 {
		code = "none"
	}
	return fmt.Errorf("%w: the token endpoint answered HTTP %d, error %s", errRefused, status, code)
}

// errRefused is the token endpoint refusing a code.
var errRefused = errors.New("code refused")

// errTokenInvalid is an identity token go-oidc did not accept.
var errTokenInvalid = errors.New("identity token refused")

// tokenRefusal is go-oidc's refusal of an identity token for the log, as one of a fixed set of
// reasons. go-oidc flattens what went wrong to text: a failed key-set fetch names the key set's
// URL whole (query and user information, the issuer's text, an API key some providers put
// there) and the key set's answer, a wrong issuer or audience names what the token says. Its
// text only picks the reason; none of it is logged. An expired token is told by its type.
func tokenRefusal(err error) error {
	var expired *oidc.TokenExpiredError
	if errors.As(err, &expired) {
		return fmt.Errorf("%w: it has expired", errTokenInvalid)
	}
	text := err.Error()
	why := "it does not verify"
	for _, r := range []struct{ has, why string }{
		{"failed to verify signature", "its signature does not verify against the issuer's key set, or the key set could not be fetched"},
		{"issued by a different provider", "it is issued by another issuer"},
		{"expected audience", "it is for another client"},
		{"before the nbf", "it is not valid yet"},
		{"malformed jwt", "it is malformed"},
		{"not signed", "it is not signed"},
		{"multiple signatures", "it has more than one signature"},
	} {
		if strings.Contains(text, r.has) {
			why = r.why
			break
		}
	}
	return fmt.Errorf("%w: %s", errTokenInvalid, why)
}
