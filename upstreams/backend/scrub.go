package backend

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"
)

// A backend's answer may quote the credentials the gateway sent it: a backend that echoes its
// request's headers in an error or a log message, a tool that reports the Authorization it
// was given. Relayed as it came, such an answer would hand the caller the backend's own
// credential (a configured header, the password of the URL's user information, the gateway's
// client-credentials token or the token exchanged for a caller), with which the caller could
// call the backend past every policy of the gateway. So each response of a backend that has
// credentials is read through a scrubber, before anything decodes it: every credential the
// request carried is overwritten wherever it appears, written as it was sent or as JSON
// escapes it, whichever era, call, list, listen or session the response belongs to.

// MinScrubbedBytes is the shortest credential looked for in a backend's answers: a shorter one
// would match ordinary text, and the gateway's own credentials are longer.
const MinScrubbedBytes = 8

// scrubbedText overwrites a credential found in an answer, cut to the credential's length so
// that the answer keeps its size (its Content-Length stays true) and its JSON stays valid.
const scrubbedText = "REDACTED"

// scrubTransport reads each response to a request through a scrubber of the credentials the
// request carried: the values of names (the configured headers and Authorization).
type scrubTransport struct {
	next  http.RoundTripper
	names []string
	// known holds the forms of the configured header values, worked out once.
	known map[string][][]byte
}

// scrubbing returns rt reading responses through a scrubber when uc gives the backend
// credentials (headers, user information in its URL, an auth block), else rt itself.
func scrubbing(rt http.RoundTripper, uc *Config) http.RoundTripper {
	if len(uc.Headers) == 0 && userInfoAuth(uc.URL) == "" && uc.Auth.Type == "" {
		return rt
	}
	t := &scrubTransport{next: rt, names: []string{"Authorization"}, known: make(map[string][][]byte, len(uc.Headers)+1)}
	for k, v := range uc.Headers {
		if k = http.CanonicalHeaderKey(k); k != "Authorization" {
			t.names = append(t.names, k)
		}
		t.known[v] = credentialForms(v)
	}
	if auth := userInfoAuth(uc.URL); auth != "" {
		t.known[auth] = credentialForms(auth)
	}
	return t
}

// unscrubbed is the transport under rt's scrubber, or rt when it has none.
func unscrubbed(rt http.RoundTripper) http.RoundTripper {
	if t, ok := rt.(*scrubTransport); ok {
		return t.next
	}
	return rt
}

func (t *scrubTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil || resp.Body == nil || resp.Body == http.NoBody {
		return resp, err
	}
	var forms [][]byte
	for _, name := range t.names {
		for _, v := range req.Header[name] {
			f, ok := t.known[v]
			if !ok {
				f = credentialForms(v) // a token the request obtained (client credentials, exchange, a caller's own)
			}
			forms = append(forms, f...)
		}
	}
	if len(forms) > 0 {
		resp.Body = newScrubBody(resp.Body, forms, resp.ContentLength)
	}
	return resp, nil
}

// credentialForms are the byte strings that spell the header value v in an answer: v, the
// credential after its scheme ("Bearer <token>"), a Basic credential's user:password and
// password, each as written (unless it holds a line break) and as JSON writes it, once or
// twice (a JSON text inside a JSON string: a tool's text that is the JSON its backend built),
// HTML characters escaped or not, a slash escaped or not. Those shorter than
// MinScrubbedBytes are left out.
func credentialForms(v string) [][]byte {
	parts := []string{v}
	if scheme, cred, ok := strings.Cut(v, " "); ok {
		parts = append(parts, cred)
		if strings.EqualFold(scheme, "Basic") {
			if raw, err := base64.StdEncoding.DecodeString(cred); err == nil {
				parts = append(parts, string(raw))
				if _, pw, ok := strings.Cut(string(raw), ":"); ok {
					parts = append(parts, pw)
				}
			}
		}
	}
	var forms []string
	for _, p := range parts {
		if len(p) >= MinScrubbedBytes {
			forms = appendNew(forms, p)
		}
	}
	for range 2 {
		for _, f := range forms {
			for _, q := range jsonSpellings(f) {
				forms = appendNew(forms, q)
			}
		}
	}
	out := make([][]byte, 0, len(forms))
	for _, f := range forms {
		if !strings.ContainsAny(f, "\r\n") {
			out = append(out, []byte(f))
		}
	}
	return out
}

// jsonSpellings are the ways a JSON encoder writes s inside a string: with <, > and &
// escaped or not, and a slash escaped or not.
func jsonSpellings(s string) []string {
	if !strings.ContainsFunc(s, jsonEscapes) {
		return nil // JSON writes s as it is: a token, most often
	}
	var out []string
	for _, html := range []bool{true, false} {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		_ = enc.Encode(s) // a string always encodes
		q := strings.TrimSuffix(b.String(), "\n")
		q = q[1 : len(q)-1]
		out = append(out, q, strings.ReplaceAll(q, "/", `\/`))
	}
	return out
}

// jsonEscapes reports whether a JSON encoder may write r otherwise than as it is.
func jsonEscapes(r rune) bool {
	return r < 0x20 || r == utf8.RuneError || strings.ContainsRune("\"\\<>&/\u2028\u2029", r)
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// scrubBody is a response body with every form overwritten. It holds back the last bytes
// read, as many as the longest form less one but never past the end of a line, until more
// arrive (or the body ends), so that a form cut across two reads is found whole.
type scrubBody struct {
	body  io.ReadCloser
	forms [][]byte
	hold  int
	chunk int // the size of the reads of body
	// buf[lo:hi] is read and scrubbed and not yet returned, of which buf[lo:ready] may be.
	buf           []byte
	lo, hi, ready int
	err           error
}

// scrubChunk is the size of the scrubber's reads of a body longer than that or of unknown
// length (size < 0).
const scrubChunk = 16 << 10

// newScrubBody scrubs body, of size bytes if size >= 0: a short answer, as most are, gets a
// buffer of its size, not scrubChunk, on every call; the byte more reads its end.
func newScrubBody(body io.ReadCloser, forms [][]byte, size int64) *scrubBody {
	hold := 0
	for _, f := range forms {
		hold = max(hold, len(f)-1)
	}
	chunk := scrubChunk
	if size >= 0 && size < scrubChunk {
		chunk = int(size) + 1
	}
	return &scrubBody{body: body, forms: forms, hold: hold, chunk: chunk}
}

func (s *scrubBody) Read(p []byte) (int, error) {
	for {
		if s.lo < s.ready {
			n := copy(p, s.buf[s.lo:s.ready])
			s.lo += n
			return n, nil
		}
		if s.err != nil {
			return 0, s.err
		}
		if s.buf == nil {
			s.buf = make([]byte, s.hold+s.chunk)
		}
		// What is held moves to the front, and the next bytes are read after it.
		s.hi, s.lo = copy(s.buf, s.buf[s.lo:s.hi]), 0
		n, err := s.body.Read(s.buf[s.hi:])
		s.hi += n
		scrub(s.buf[:s.hi], s.forms)
		s.ready = max(0, s.hi-s.hold)
		// No form holds a line break, so what ends a line goes now: an event of a stream
		// reaches its reader whole while the backend waits for the answer to it.
		if i := bytes.LastIndexAny(s.buf[s.ready:s.hi], "\r\n"); i >= 0 {
			s.ready += i + 1
		}
		if err != nil {
			s.err, s.ready = err, s.hi
		}
	}
}

func (s *scrubBody) Close() error { return s.body.Close() }

// scrub overwrites each form in b with scrubbedText, cut to the form's length.
func scrub(b []byte, forms [][]byte) {
	for _, f := range forms {
		for i := 0; ; {
			j := bytes.Index(b[i:], f)
			if j < 0 {
				break
			}
			i += j
			for k := range f {
				b[i+k] = scrubbedText[k%len(scrubbedText)]
			}
			i += len(f)
		}
	}
}
