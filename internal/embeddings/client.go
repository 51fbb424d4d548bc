package embeddings

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/mcp-gateway/gateway/internal/retryafter"
)

// The reasons an embedding is not had, the values of the failures and fallbacks metrics' reason
// label: a closed set.
const (
	ReasonTimeout     = "timeout"     // no answer within the timeout
	ReasonUnreachable = "unreachable" // the connection failed
	ReasonRefusedKey  = "refused_key" // 401 or 403: the API key is wrong or lacks the right
	ReasonRateLimited = "rate_limited"
	ReasonStatus      = "status"        // another status than 200
	ReasonMalformed   = "malformed"     // not the protocol's answer
	ReasonDimensions  = "dimensions"    // vectors of the wrong length
	ReasonBackoff     = "backoff"       // not asked: failures earlier, waiting before the next try
	ReasonBudget      = "budget"        // not asked: maxTextsPerMinute or maxConcurrent spent
	ReasonCaller      = "caller_budget" // not asked: the caller's maxQueriesPerCallerPerMinute spent
	ReasonNotReady    = "not_ready"     // the tools' vectors were not there in time
	ReasonCanceled    = "canceled"      // the search's caller went away: not the endpoint's failure
)

// Reasons lists every reason, for metrics that create their series up front.
func Reasons() []string {
	return []string{ReasonTimeout, ReasonUnreachable, ReasonRefusedKey, ReasonRateLimited, ReasonStatus,
		ReasonMalformed, ReasonDimensions, ReasonBackoff, ReasonBudget, ReasonCaller, ReasonNotReady, ReasonCanceled}
}

// Error is why an embedding request failed. It never holds the key, a query or a tool's text.
type Error struct {
	Reason string
	// Status is the HTTP status, when there was one.
	Status int
	// RetryAfter is what a 429 or 503 asked to wait (0: nothing said).
	RetryAfter time.Duration
	// Detail says more, from the gateway's side only (never the endpoint's body).
	Detail string
}

func (e *Error) Error() string {
	s := "embeddings: " + e.Reason
	if e.Status != 0 {
		s += " (HTTP " + strconv.Itoa(e.Status) + ")"
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// reasonOf is err's reason (ReasonUnreachable for an error of no known kind).
func reasonOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ReasonUnreachable
}

// maxErrorBody is how much of a failed answer is read (and dropped) so the connection can be
// reused.
const maxErrorBody = 4 << 10

// maxBytesPerNumber bounds one vector component in the answer's JSON, with its separator.
const maxBytesPerNumber = 32

// maxVectorEnvelope bounds what surrounds one vector's numbers in the answer's JSON:
// {"object":"embedding","index":N,"embedding":[...]}.
const maxVectorEnvelope = 256

// client speaks the OpenAI embeddings protocol: POST {"model", "input": [texts],
// "encoding_format": "float"[, "dimensions"]}, answered by {"data": [{"index", "embedding"}]}.
type client struct {
	cfg  Config
	http *http.Client
	// now is the embedder's clock, against which a Retry-After date is read.
	now func() time.Time
	// keyHeader and keyValue carry the API key, made once (setKey) rather than per request;
	// keyHeader is "" when there is no key.
	keyHeader, keyValue string
}

// setKey makes the header that carries key: "Authorization: Bearer <key>", or the key alone in
// the header apiKeyHeader names; none for an empty key.
func (c *client) setKey(key string) {
	c.keyHeader, c.keyValue = "", ""
	if key == "" {
		return
	}
	c.keyHeader, c.keyValue = http.CanonicalHeaderKey(c.cfg.APIKeyHeader), key
	if c.keyHeader == "Authorization" {
		c.keyValue = "Bearer " + key
	}
}

type request struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
	Dimensions     int      `json:"dimensions,omitempty"`
}

type response struct {
	Data []struct {
		Index     *int      `json:"index"`
		Embedding []float64 `json:"embedding"`
	} `json:"data"`
}

// embed asks for the vectors of texts, each of dims numbers (0: any, the same for all), and
// checks the answer holds exactly one finite, non-zero vector per text.
func (c *client) embed(ctx context.Context, texts []string, dims int) ([][]float32, error) {
	body, err := json.Marshal(request{Model: c.cfg.Model, Input: texts, EncodingFormat: "float", Dimensions: c.cfg.Dimensions})
	if err != nil {
		return nil, &Error{Reason: ReasonMalformed, Detail: err.Error()}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return nil, &Error{Reason: ReasonUnreachable, Detail: "building the request"}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.keyHeader != "" {
		req.Header.Set(c.keyHeader, c.keyValue)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
			return nil, &Error{Reason: ReasonTimeout}
		}
		return nil, &Error{Reason: ReasonUnreachable}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
		return nil, statusError(resp, c.now())
	}
	limit := answerLimit(len(texts), dims)
	raw, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, &Error{Reason: ReasonTimeout}
	case err != nil:
		return nil, &Error{Reason: ReasonUnreachable, Detail: "reading the answer"}
	case int64(len(raw)) > limit:
		return nil, &Error{Reason: ReasonMalformed, Detail: "the answer is larger than its vectors can be"}
	}
	return decode(raw, len(texts), dims)
}

// answerLimit is the most bytes an answer of n vectors of dims numbers can take (dims 0: not
// known yet, MaxDimensions), beyond which it is not read: once the vectors' length is known, a
// batch's answer is bounded by it, not by the longest vector any model makes (a batch of 64
// would otherwise be read up to 32 MiB whatever the model).
func answerLimit(n, dims int) int64 {
	if dims == 0 {
		dims = MaxDimensions
	}
	return 4<<10 + int64(n)*(maxVectorEnvelope+int64(dims)*maxBytesPerNumber)
}

// statusError classifies a status other than 200 answered at now.
func statusError(resp *http.Response, now time.Time) error {
	e := &Error{Reason: ReasonStatus, Status: resp.StatusCode}
	switch resp.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
		e.Reason = ReasonRefusedKey
	case http.StatusTooManyRequests:
		e.Reason = ReasonRateLimited
	}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		e.RetryAfter, _ = retryafter.Parse(resp.Header.Get("Retry-After"), now, maxRetryAfter)
	}
	return e
}

// maxRetryAfter caps what an endpoint can ask the gateway to wait.
const maxRetryAfter = time.Hour

// decode checks the answer: one vector per text by index, each finite, not zero, of dims numbers
// (0: all of one length), and scales each to length 1.
func decode(raw []byte, n, dims int) ([][]float32, error) {
	var r response
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, &Error{Reason: ReasonMalformed, Detail: "not an embeddings answer"}
	}
	if len(r.Data) != n {
		return nil, &Error{Reason: ReasonMalformed, Detail: fmt.Sprintf("%d vectors for %d texts", len(r.Data), n)}
	}
	out := make([][]float32, n)
	for _, d := range r.Data {
		if d.Index == nil || *d.Index < 0 || *d.Index >= n || out[*d.Index] != nil {
			return nil, &Error{Reason: ReasonMalformed, Detail: "a vector's index is missing, out of range or repeated"}
		}
		if dims == 0 {
			dims = len(d.Embedding)
		}
		if len(d.Embedding) != dims || dims == 0 || dims > MaxDimensions {
			return nil, &Error{Reason: ReasonDimensions, Detail: fmt.Sprintf("a vector of %d dimensions, want %d", len(d.Embedding), dims)}
		}
		norm := 0.0
		for _, x := range d.Embedding {
			if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) > math.MaxFloat32 {
				return nil, &Error{Reason: ReasonMalformed, Detail: "a vector holds a number that is not finite"}
			}
			norm += x * x
		}
		if norm == 0 || math.IsInf(norm, 0) {
			return nil, &Error{Reason: ReasonMalformed, Detail: "a vector of zeros, or too long to scale"}
		}
		out[*d.Index] = unit(d.Embedding, math.Sqrt(norm))
	}
	return out, nil
}

// unit is v scaled to length 1 (norm is its length): search compares vectors by their dot
// product, so each tool's length is divided out once here rather than in every search.
func unit(v []float64, norm float64) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x / norm)
	}
	return out
}
