package webpage

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

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
