package mcptest

import (
	"bytes"
	"io"
	"net/http"
	"sync"
)

// Exchange is one HTTP request a backend received and the response it sent.
type Exchange struct {
	// Method is the HTTP method, for example "POST".
	Method string
	// Path is the request path, for example "/mcp".
	Path string
	// Header is a copy of the request headers as the backend saw them.
	Header http.Header
	// Body is the complete request body.
	Body []byte
	// Status is the response status code; 0 while the response is still
	// being written.
	Status int
	// ResponseHeader is a copy of the response headers.
	ResponseHeader http.Header
	// ResponseBody is the complete response body, SSE events included.
	ResponseBody []byte
}

// recorder keeps every exchange that passed through its middleware.
type recorder struct {
	mu        sync.Mutex
	exchanges []*Exchange
}

// wrap returns next wrapped by a middleware that records each request and
// its response once the response is complete.
func (r *recorder) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			http.Error(w, "reading body", http.StatusBadRequest)
			return
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		// The request is visible at once, so a test can see a call that is
		// still in flight (slow) before its response is complete.
		ex := &Exchange{
			Method: req.Method,
			Path:   req.URL.Path,
			Header: req.Header.Clone(),
			Body:   body,
		}
		r.mu.Lock()
		r.exchanges = append(r.exchanges, ex)
		r.mu.Unlock()
		next.ServeHTTP(&teeWriter{ResponseWriter: w, rec: r, ex: ex}, req)
	})
}

func (r *recorder) all() []Exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Exchange, len(r.exchanges))
	for i, ex := range r.exchanges {
		out[i] = *ex
		out[i].Header = ex.Header.Clone()
		out[i].ResponseHeader = ex.ResponseHeader.Clone()
		out[i].ResponseBody = bytes.Clone(ex.ResponseBody)
	}
	return out
}

func (r *recorder) reset() {
	r.mu.Lock()
	r.exchanges = nil
	r.mu.Unlock()
}

// teeWriter records the status, headers and body of a response as they are
// written, before the peer can see them, so an exchange is complete in
// Requests() by the time the client has read the response. It exposes Unwrap
// so that http.ResponseController can still flush SSE events through it.
type teeWriter struct {
	http.ResponseWriter
	rec         *recorder
	ex          *Exchange
	wroteHeader bool
}

func (t *teeWriter) WriteHeader(code int) {
	if !t.wroteHeader {
		t.wroteHeader = true
		t.rec.mu.Lock()
		t.ex.Status = code
		t.ex.ResponseHeader = t.ResponseWriter.Header().Clone()
		t.rec.mu.Unlock()
	}
	t.ResponseWriter.WriteHeader(code)
}

func (t *teeWriter) Write(p []byte) (int, error) {
	if !t.wroteHeader {
		t.WriteHeader(http.StatusOK)
	}
	t.rec.mu.Lock()
	t.ex.ResponseBody = append(t.ex.ResponseBody, p...)
	t.rec.mu.Unlock()
	return t.ResponseWriter.Write(p)
}

// Flush keeps SSE streaming for callers that type-assert http.Flusher.
func (t *teeWriter) Flush() {
	if f, ok := t.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (t *teeWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }
