package mcphttp

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/mcpheader"
	"github.com/mcp-gateway/gateway/upstreams"
)

// Mcp-Param-* headers mirror tool arguments a tool annotates with x-mcp-header, so that what
// sits between client and backend (a mesh, a rate limiter) can act on them without reading the
// body (https://modelcontextprotocol.io/specification/2026-07-28/basic/transports, SEP-2243).
// The gateway makes sure nothing behind it can be told one value while the backend acts on
// another: every mirrored value is checked against the body, and the backend receives headers
// recomputed from the body for the tool it actually calls, never the client's.

// maxSafeInteger is the largest integer an Mcp-Param-* header may mirror: 2^53-1, the range in
// which every JSON decoder reads an integer exactly.
const maxSafeInteger = 1<<53 - 1

// checkParamSyntax is the part of stage headers for the Mcp-Param-* headers that needs no tool
// definition: each such header appears once and carries a validly encoded value, and only on a
// tools/call. A request of any other method has no arguments its headers could mirror: the
// gateway could bind such a header to nothing, and would forward it unchecked to a backend and
// whatever sits in front of it, so it is refused as a header a tool does not declare is.
func checkParamSyntax(h http.Header, method string) error {
	for k, vs := range h {
		if !strings.HasPrefix(k, mcpheader.ParamPrefix) {
			continue
		}
		if method != upstreams.MethodToolsCall {
			return unboundParamHeader(k, method)
		}
		if len(vs) != 1 {
			return headerMismatch("Header mismatch: " + k + " header appears more than once")
		}
		if _, err := mcpheader.Decode(vs[0]); err != nil {
			return headerMismatch("Header mismatch: " + k + " header value is not validly encoded")
		}
	}
	return nil
}

// CheckParamSyntax is checkParamSyntax for another edge, whose client's Mcp-Param-* headers the
// request it builds carries (Incoming.Run): each once, validly encoded, and only on a tools/call.
func CheckParamSyntax(h http.Header, method string) error { return checkParamSyntax(h, method) }

// withParamHeadersOf returns dst with the Mcp-Param-* headers of src added (dst made when nil
// and there are any): the headers of a request another edge built, whose client's Mcp-Param-*
// headers stage bind-headers holds to the arguments as it holds a 2026-07-28 client's. What sits
// between that client and the gateway may route on them as on any other client's.
func withParamHeadersOf(dst, src http.Header) http.Header {
	for k, vs := range src {
		if !strings.HasPrefix(k, mcpheader.ParamPrefix) {
			continue
		}
		if dst == nil {
			dst = make(http.Header, 2)
		}
		dst[k] = vs
	}
	return dst
}

// unboundParamHeader is the refusal of an Mcp-Param-* header k on a request of a method other
// than tools/call, which has no arguments to mirror.
func unboundParamHeader(k, method string) error {
	return headerMismatch("Header mismatch: " + k + " header mirrors no argument of a " + method + " request")
}

// refuseParamHeaders refuses the first Mcp-Param-* header of h, for a call of a tool that
// declares none (a meta-tool of a search endpoint).
func refuseParamHeaders(h http.Header) error {
	for k := range h {
		if strings.HasPrefix(k, mcpheader.ParamPrefix) {
			return headerMismatch("Header mismatch: " + k + " header is not declared by the tool")
		}
	}
	return nil
}

// bindParamHeaders is stage bind-headers: it checks a tools/call's Mcp-Param-* headers
// against its arguments, using the tool's x-mcp-header bindings from its backend's tools/list, and
// sets x.route.paramHeaders to what the backend receives. Refused with 400/-32020: a header whose
// argument is absent or null, a missing header for a present argument, a value that differs from
// the argument, and a header the tool does not declare (the gateway cannot bind it to anything the
// backend reads; a tool the list does not show declares none). An argument that is an object or
// array, or a number that is not an integer within ±(2^53-1), cannot be mirrored and is refused
// too.  The bindings come from the backend's tools/list as this replica holds it (cached, or
// indexed from any list fetched in the last half minute), else a list fetched now, which also
// decides whether the tool is listed at all (listedEntry, listed.go): a call fails with the
// fetch's error when it cannot be had, so neither a name nor a header is forwarded unchecked.
//
// A request another edge built (internal) need not carry a header (a pre-2026 client owes none),
// but one its client sent is checked as above; a request whose params an interceptor replaced
// (mutated) carries no Mcp-Param-* header of its client's. The headers missing are derived from
// the arguments, so a 2026-07-28 backend gets what it requires.
func (x *request) bindParamHeaders(target upstreams.Target) error {
	headers := countParamHeaders(x.hdr)
	th, err := listedEntry(x, target)
	if err != nil {
		return err
	}
	x.route.toolHeaders = th // the guardrails' schema check reads its schemas
	if th.Invalid != "" {
		return invalidParams("Invalid params: the tool's x-mcp-header declarations are invalid: " + th.Invalid)
	}
	declared := 0
	for i := range th.Bindings {
		bd := &th.Bindings[i]
		hv, hasHeader, err := headerValue(x.hdr, bd.Header)
		if err != nil {
			return err
		}
		if hasHeader {
			declared++
		}
		val, err := argumentAt(x.in.params.Arguments, bd.Path)
		if err != nil {
			return err
		}
		arg := strings.Join(bd.Path, ".")
		if val == nil {
			if hasHeader {
				return headerMismatch("Header mismatch: " + bd.Header + " header is present but argument " + arg + " is absent")
			}
			continue
		}
		want, ok := mirrored(val)
		if !ok {
			return headerMismatch("Header mismatch: argument " + arg + " cannot be mirrored into " + bd.Header)
		}
		switch {
		case !hasHeader && !x.internal && !x.mutated:
			return headerMismatch("Header mismatch: " + bd.Header + " header is required for argument " + arg)
		case hasHeader:
			got, _ := mcpheader.Decode(hv) // checkParamSyntax has refused what does not decode
			if !sameParam(got, want, val[0] != '"' && val[0] != 't' && val[0] != 'f') {
				// The values themselves are arguments, which are never echoed or logged.
				return headerMismatch("Header mismatch: " + bd.Header + " header value does not match argument " + arg)
			}
		}
		if x.route.paramHeaders == nil {
			x.route.paramHeaders = make(http.Header, len(th.Bindings))
		}
		x.route.paramHeaders[bd.Header] = []string{mcpheader.Encode(want)}
	}
	if declared != headers {
		for k := range x.hdr {
			if strings.HasPrefix(k, mcpheader.ParamPrefix) && !declares(th, k) {
				return headerMismatch("Header mismatch: " + k + " header is not declared by the tool")
			}
		}
	}
	return nil
}

// listedToolHeaders is target's entry in its backend's tools/list as x's caller sees it: the list
// this replica holds, else with fetch one fetched now (with x's trace headers), else nil.
func listedToolHeaders(x *request, target upstreams.Target, fetch bool) (*upstreams.ToolHeaders, error) {
	q := listQuery(x, target, fetch)
	return x.s.backends.ToolHeaders(x.ctx, &q, target)
}

// listQuery is the query for target's backend's list as x's caller sees it; with fetch, one
// that fetches the list when it is not held, passing x's trace headers on (made only then).
func listQuery(x *request, target upstreams.Target, fetch bool) upstreams.ToolHeaderQuery {
	var pass http.Header
	if fetch {
		pass = x.trace().headers()
	}
	return upstreams.ToolHeaderQuery{
		ProtocolVersion: x.in.meta.ProtocolVersion,
		Header:          pass,
		CacheKey:        x.subject(),
		SubjectToken:    x.subjectToken(target.Upstream),
		SubjectKey:      x.caller.keyOf(x.subjectToken(target.Upstream)),
		Fetch:           fetch,
	}
}

func countParamHeaders(h http.Header) int {
	n := 0
	for k := range h {
		if strings.HasPrefix(k, mcpheader.ParamPrefix) {
			n++
		}
	}
	return n
}

func declares(th *upstreams.ToolHeaders, header string) bool {
	for i := range th.Bindings {
		if th.Bindings[i].Header == header {
			return true
		}
	}
	return false
}

// argumentAt returns the raw value at path in the arguments object, nil when it is absent or
// null. A member on the path that is a spelling variant of the bound name is refused: the
// gateway would find the argument absent while a case-insensitive backend reads it.
func argumentAt(args []byte, path []string) ([]byte, error) {
	cur := trimJSONSpace(args)
	for _, name := range path {
		if len(cur) == 0 || cur[0] != '{' {
			return nil, nil
		}
		var next []byte
		err := jsonrpc.Members(cur, func(k, v []byte) error {
			switch {
			case string(k) == name:
				next = v
			case jsonrpc.FoldEqual(k, []byte(name)):
				return invalidParams("Invalid params: argument member " + strconv.Quote(string(k)) +
					" differs from " + strconv.Quote(name) + " only in case or punctuation")
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		cur = trimJSONSpace(next)
	}
	if len(cur) == 0 || string(cur) == "null" {
		return nil, nil
	}
	return cur, nil
}

// mirrored renders an argument as its header carries it: a string as is, an integer in
// decimal, a boolean as true or false. White space around the value is not part of it. A value
// JSON parsers read differently cannot be mirrored: a string with a lone surrogate escape
// ("\ud800", which encoding/json reads as U+FFFD and JSON.parse or Python keep as is) and a
// number that is not exactly an integer (42.00000000000000001, which a float64 reads as 42).
func mirrored(val []byte) (string, bool) {
	val = trimJSONSpace(val)
	if len(val) < 2 && (len(val) == 0 || val[0] == '"') {
		return "", false
	}
	switch val[0] {
	case '"':
		if !bytes.ContainsRune(val, '\\') {
			return string(val[1 : len(val)-1]), true
		}
		var s string
		if jsonrpc.LoneSurrogate(val) || json.Unmarshal(val, &s) != nil {
			return "", false
		}
		return s, true
	case 't', 'f':
		return string(val), true
	case '{', '[':
		return "", false
	}
	n, ok := safeInteger(string(val))
	if !ok {
		return "", false
	}
	return strconv.FormatInt(n, 10), true
}

// trimJSONSpace cuts the white space JSON allows around a value.
func trimJSONSpace(b []byte) []byte {
	return bytes.Trim(b, " \t\r\n")
}

// sameParam compares a decoded header value with the rendered argument; integers numerically
// (42.0 equals 42), since the header may spell them differently.
func sameParam(got, want string, number bool) bool {
	if !number {
		return got == want
	}
	g, ok := safeInteger(got)
	return ok && strconv.FormatInt(g, 10) == want
}

// safeInteger parses a JSON number whose decimal value is exactly an integer within ±(2^53-1):
// 42, 42.0, 4.2e1 and 420e-1 are 42; 42.00000000000000001 is no integer, though a float64
// reads it as 42 (a decimal-exact decoder, Python's Decimal or Java's BigDecimal, would not).
func safeInteger(s string) (int64, bool) {
	if s == "" || (s[0] != '-' && (s[0] < '0' || s[0] > '9')) || len(s) > 64 || jsonrpc.Scan([]byte(s), jsonrpc.Limits{}) != nil {
		return 0, false
	}
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	mant, exp, hasExp := strings.Cut(s, "e")
	if !hasExp {
		mant, exp, hasExp = strings.Cut(s, "E")
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	// n holds the significant digits (nd of them), zeros waits for a non-zero digit after it:
	// trailing zeros only scale the value.
	var n int64
	nd, zeros := 0, 0
	for _, part := range [2]string{intPart, frac} {
		for i := 0; i < len(part); i++ {
			if part[i] == '0' {
				if nd > 0 {
					zeros++
				}
				continue
			}
			if nd += zeros + 1; nd > maxSafeDigits {
				return 0, false // 10^16 and more, or a fraction
			}
			n = n*pow10[zeros+1] + int64(part[i]-'0')
			zeros = 0
		}
	}
	if nd == 0 {
		return 0, true // a zero, however written
	}
	e := 0
	if hasExp {
		var err error
		if e, err = strconv.Atoi(exp); err != nil || e > 64 || e < -64 {
			return 0, false // with 64 bytes of digits at most, far out of range or a fraction
		}
	}
	// The value is n times 10^k.
	k := e - len(frac) + zeros
	if k < 0 || nd+k > maxSafeDigits {
		return 0, false
	}
	if n *= pow10[k]; n > maxSafeInteger {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}

// maxSafeDigits is the number of decimal digits of maxSafeInteger.
const maxSafeDigits = 16

// pow10 are the powers of ten up to 10^maxSafeDigits.
var pow10 = [maxSafeDigits + 1]int64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16}
