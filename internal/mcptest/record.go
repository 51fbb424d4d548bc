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
		tw := &teeWriter{ResponseWriter: w}
		next.ServeHTTP(tw, req)
		r.mu.Lock()
		ex.Status = tw.status
		ex.ResponseHeader = w.Header().Clone()
		ex.ResponseBody = tw.body.Bytes()
		r.mu.Unlock()
	})
}

func (r *recorder) all() []Exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Exchange, len(r.exchanges))
	for i, ex := range r.exchanges {
		out[i] = *ex
	}
	return out
}

func (r *recorder) reset() {
	r.mu.Lock()
	r.exchanges = nil
	r.mu.Unlock()
}

// teeWriter copies the status and body of a response. It exposes Unwrap so
// that http.ResponseController can still flush SSE events through it.
type teeWriter struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (t *teeWriter) WriteHeader(code int) {
	if t.status == 0 {
		t.status = code
	}
	t.ResponseWriter.WriteHeader(code)
}

func (t *teeWriter) Write(p []byte) (int, error) {
	if t.status == 0 {
		t.status = http.StatusOK
	}
	t.body.Write(p)
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
