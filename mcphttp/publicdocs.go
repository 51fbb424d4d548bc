package mcphttp

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/mcp-gateway/gateway/internal/mcpheader"
)

// The documents the MCP listener serves to anyone, without a token, from any origin: the
// protected resource metadata (RFC 9728), the Server Cards and the AI Catalog. Each is built
// once, from configuration, so every replica serves the same bytes under the same entity tag,
// and a shared cache can hold it: nothing in it depends on who asks.

// metadataCacheControl is how long a cache may keep the protected resource metadata.
const metadataCacheControl = "public, max-age=300"

// metadataCORSHeaders are the request headers a page may send when it fetches the protected
// resource metadata: MCP clients send MCP-Protocol-Version there too (the TypeScript SDK does,
// and retries without it only when the preflight fails).
const metadataCORSHeaders = "If-None-Match, " + mcpheader.ProtocolVersion

// documentAllow is the Allow header of every public document's 405.
const documentAllow = "GET, HEAD, OPTIONS"

// document is a public document as served: its bytes, media type, entity tag, caching and the
// request headers its CORS headers allow.
type document struct {
	body         []byte
	contentType  string
	etag         string
	cacheControl string
	corsHeaders  string
}

func newDocument(v any, contentType, cacheControl, corsHeaders string) (*document, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(b)
	return &document{body: b, contentType: contentType, etag: `"` + hex.EncodeToString(sum[:12]) + `"`,
		cacheControl: cacheControl, corsHeaders: corsHeaders}, nil
}

// metadataDocument is a protected resource metadata document as served.
func metadataDocument(v any) (*document, error) {
	return newDocument(v, "application/json", metadataCacheControl, metadataCORSHeaders)
}

// register serves d at path: GET and HEAD (net/http sends a HEAD's headers and drops its
// body), a CORS preflight for OPTIONS, and 405 with "Allow: GET, HEAD, OPTIONS" for every other
// method (echo's own answer lists the methods of every route at the path, refused ones too,
// and answers OPTIONS with a 204 that grants no origin).
func (d *document) register(e *echo.Echo, path string) {
	e.Match([]string{http.MethodGet, http.MethodHead}, path, d.serve)
	e.OPTIONS(path, d.preflight)
	e.RouteNotFound(path, func(c echo.Context) error {
		d.cors(c.Response().Header())
		c.Response().Header().Set("Allow", documentAllow)
		return c.NoContent(http.StatusMethodNotAllowed)
	})
}

// cors sets the CORS headers of d's responses: any origin may read it.
func (d *document) cors(h http.Header) {
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Access-Control-Allow-Methods", "GET")
	h.Set("Access-Control-Allow-Headers", d.corsHeaders)
	h.Set("Access-Control-Expose-Headers", "ETag")
}

func (d *document) preflight(c echo.Context) error {
	d.cors(c.Response().Header())
	return c.NoContent(http.StatusNoContent)
}

// serve answers with the document, or 304 when the client holds it already.
func (d *document) serve(c echo.Context) error {
	h := c.Response().Header()
	d.cors(h)
	h.Set("Cache-Control", d.cacheControl)
	h.Set("ETag", d.etag)
	h.Set("X-Content-Type-Options", "nosniff")
	if matchesETag(c.Request().Header.Values("If-None-Match"), d.etag) {
		return c.NoContent(http.StatusNotModified)
	}
	return c.Blob(http.StatusOK, d.contentType, d.body)
}

// matchesETag reports whether If-None-Match values name etag (weak comparison, RFC 9110
// §13.1.2) or are "*".
func matchesETag(values []string, etag string) bool {
	for _, v := range values {
		for _, tag := range strings.Split(v, ",") {
			tag = strings.TrimPrefix(strings.TrimSpace(tag), "W/")
			if tag == "*" || tag == etag {
				return true
			}
		}
	}
	return false
}
