// Package otlptest is a minimal OTLP/HTTP trace collector for tests: a real HTTP server on
// loopback that decodes the protobuf export requests the gateway sends and keeps their spans.
package otlptest

import (
	"compress/gzip"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// TracesPath is where OTLP/HTTP trace exports are posted.
const TracesPath = "/v1/traces"

// OTLP span kinds, as Span.Kind holds them.
const (
	KindServer = int32(tracepb.Span_SPAN_KIND_SERVER)
	KindClient = int32(tracepb.Span_SPAN_KIND_CLIENT)
)

// Span is one received span, with ids in lowercase hex.
type Span struct {
	Name, TraceID, SpanID, ParentSpanID string
	// Kind is the OTLP span kind: KindServer or KindClient for the gateway's spans.
	Kind int32
	// Attributes are the span's attributes, values as strings.
	Attributes map[string]string
	// Resource are the attributes of the span's resource.
	Resource map[string]string
	// StatusError reports a span whose status is ERROR.
	StatusError bool
	// Events is how many events the span recorded.
	Events int
}

// Request is what one export request carried besides its spans.
type Request struct {
	Path   string
	Header http.Header
}

// Collector receives OTLP/HTTP trace exports.
type Collector struct {
	// URL is the collector's base URL (the endpoint to configure).
	URL string

	mu       sync.Mutex
	spans    []Span
	requests []Request
	status   int
}

// Start serves a collector on loopback until the test ends. It answers every export with
// status (200 when 0).
func Start(t testing.TB, status int) *Collector {
	t.Helper()
	c := &Collector{status: status}
	srv := httptest.NewServer(http.HandlerFunc(c.serve))
	t.Cleanup(srv.Close)
	c.URL = srv.URL
	return c
}

// Spans returns the spans received so far.
func (c *Collector) Spans() []Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Span(nil), c.spans...)
}

// Requests returns the export requests received so far.
func (c *Collector) Requests() []Request {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Request(nil), c.requests...)
}

func (c *Collector) serve(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	c.requests = append(c.requests, Request{Path: r.URL.Path, Header: r.Header.Clone()})
	c.mu.Unlock()
	if r.Method != http.MethodPost || r.URL.Path != TracesPath || r.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "want a protobuf POST to "+TracesPath, http.StatusBadRequest)
		return
	}
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	raw, err := io.ReadAll(io.LimitReader(body, 16<<20))
	var req coltracepb.ExportTraceServiceRequest
	if err == nil {
		err = proto.Unmarshal(raw, &req)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.keep(&req)
	if c.status != 0 && c.status != http.StatusOK {
		http.Error(w, "refused by the test", c.status)
		return
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	b, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	_, _ = w.Write(b)
}

func (c *Collector) keep(req *coltracepb.ExportTraceServiceRequest) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		res := attrMap(rs.GetResource().GetAttributes())
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				c.spans = append(c.spans, Span{
					Name: s.GetName(), TraceID: hex.EncodeToString(s.GetTraceId()),
					SpanID: hex.EncodeToString(s.GetSpanId()), ParentSpanID: hex.EncodeToString(s.GetParentSpanId()),
					Kind: int32(s.GetKind()), Attributes: attrMap(s.GetAttributes()), Resource: res,
					StatusError: s.GetStatus().GetCode() == tracepb.Status_STATUS_CODE_ERROR, Events: len(s.GetEvents()),
				})
			}
		}
	}
}

func attrMap(kvs []*commonpb.KeyValue) map[string]string {
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		m[kv.GetKey()] = kv.GetValue().GetStringValue()
	}
	return m
}
