// Package embedtest starts an embeddings server for tests that speaks the OpenAI embeddings
// protocol (POST /v1/embeddings, {"model", "input", "encoding_format", "dimensions"} answered by
// {"object": "list", "data": [{"object": "embedding", "index", "embedding"}], "model", "usage"},
// errors as {"error": {"message", "type", "code"}}), on a loopback httptest server.
//
// It is a stand-in: no real model can run here. Its vectors are hashed character trigrams
// (Vector): each word of the text, lower-cased and framed by spaces, adds ±1 for each of its
// trigrams to the dimension its FNV-1a hash picks. Texts that share spellings (misspellings,
// word stems: "recrods" and "records") are near; meaning is not modelled at all. That is enough
// for a test to see a fusion change a ranking deterministically, and nothing about how a real
// model ranks.
package embedtest

import (
	"encoding/json"
	"hash/fnv"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"
)

// DefaultDims is the length of the server's vectors when a request names none.
const DefaultDims = 256

// Fault is what the server does instead of answering well.
type Fault struct {
	// Status, if set, is answered with an OpenAI error body (and RetryAfter as Retry-After).
	Status     int
	RetryAfter string
	// Body, if set, is answered with status 200 as it is (garbage).
	Body string
	// Hang waits this long (or until the request is cancelled) before answering.
	Hang time.Duration
	// Dims, if set, is the length of the vectors answered whatever was asked.
	Dims int
	// MinInputs, if set, limits the fault to requests of at least that many texts (tool
	// batches), so queries are answered well.
	MinInputs int
}

// Server is a running embeddings server.
type Server struct {
	URL   string // the endpoint: .../v1/embeddings
	key   string
	mu    sync.Mutex
	fault Fault
	// Requests counts requests received, Texts the texts they carried, by model.
	requests, texts int
	inputs          []string
}

// Start starts a server that requires key as a bearer token ("" : none).
func Start(tb testing.TB, key string) *Server {
	tb.Helper()
	s := &Server{key: key}
	hs := httptest.NewServer(http.HandlerFunc(s.serve))
	tb.Cleanup(hs.Close)
	s.URL = hs.URL + "/v1/embeddings"
	return s
}

// SetFault makes every later request fail as f says (the zero Fault: answer well).
func (s *Server) SetFault(f Fault) {
	s.mu.Lock()
	s.fault = f
	s.mu.Unlock()
}

// Counts is how many requests and texts the server received.
func (s *Server) Counts() (requests, texts int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests, s.texts
}

// Inputs are the texts received, in order.
func (s *Server) Inputs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.inputs...)
}

type request struct {
	Model          string          `json:"model"`
	Input          json.RawMessage `json:"input"`
	EncodingFormat string          `json:"encoding_format"`
	Dimensions     int             `json:"dimensions"`
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
		writeError(w, http.StatusNotFound, "", "not found")
		return
	}
	if s.key != "" && r.Header.Get("Authorization") != "Bearer "+s.key {
		writeError(w, http.StatusUnauthorized, "invalid_api_key", "Incorrect API key provided.")
		return
	}
	var req request
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model == "" {
		writeError(w, http.StatusBadRequest, "", "invalid request body")
		return
	}
	var inputs []string
	if json.Unmarshal(req.Input, &inputs) != nil {
		var one string
		if json.Unmarshal(req.Input, &one) != nil {
			writeError(w, http.StatusBadRequest, "", "input must be a string or an array of strings")
			return
		}
		inputs = []string{one}
	}
	s.mu.Lock()
	s.requests++
	s.texts += len(inputs)
	s.inputs = append(s.inputs, inputs...)
	f := s.fault
	s.mu.Unlock()
	if len(inputs) < f.MinInputs {
		f = Fault{}
	}
	if f.Hang > 0 {
		select {
		case <-time.After(f.Hang):
		case <-r.Context().Done():
			return
		}
	}
	switch {
	case f.Status != 0:
		if f.RetryAfter != "" {
			w.Header().Set("Retry-After", f.RetryAfter)
		}
		writeError(w, f.Status, "", http.StatusText(f.Status))
		return
	case f.Body != "":
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(f.Body))
		return
	}
	dims := req.Dimensions
	if dims == 0 {
		dims = DefaultDims
	}
	if f.Dims != 0 {
		dims = f.Dims
	}
	writeVectors(w, req.Model, inputs, dims)
}

func writeVectors(w http.ResponseWriter, model string, inputs []string, dims int) {
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	out := struct {
		Object string `json:"object"`
		Data   []item `json:"data"`
		Model  string `json:"model"`
		Usage  struct {
			PromptTokens int `json:"prompt_tokens"`
			TotalTokens  int `json:"total_tokens"`
		} `json:"usage"`
	}{Object: "list", Model: model}
	for i, in := range inputs {
		out.Data = append(out.Data, item{Object: "embedding", Index: i, Embedding: Vector(in, dims)})
		n := len(strings.Fields(in))
		out.Usage.PromptTokens += n
		out.Usage.TotalTokens += n
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	body := map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "param": nil, "code": code}}
	_ = json.NewEncoder(w).Encode(body)
}

// Vector is the stand-in embedding of text: hashed character trigrams of its words, unit length.
func Vector(text string, dims int) []float32 {
	v := make([]float32, dims)
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for _, w := range words {
		framed := []rune(" " + w + " ")
		for i := 0; i+3 <= len(framed); i++ {
			h := fnv.New32a()
			_, _ = h.Write([]byte(string(framed[i : i+3])))
			sum := h.Sum32()
			sign := float32(1)
			if sum&(1<<31) != 0 {
				sign = -1
			}
			v[int(sum%uint32(dims))] += sign
		}
	}
	n := 0.0
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 {
		v[0] = 1 // a text without a word: some vector, as a model gives
		return v
	}
	for i := range v {
		v[i] = float32(float64(v[i]) / math.Sqrt(n))
	}
	return v
}
