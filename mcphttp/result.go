package mcphttp

import (
	"encoding/json"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// The gateway's results get resultType defaulted to "complete" (required on every result in
// 2026-07-28) and the gateway's serverInfo in _meta (SHOULD on every result), replacing a
// backend's: clients talk to one server, the gateway. Every other member is copied byte for
// byte, or rather borrowed: a large member is written from where the backend's response was
// read, never copied (see outMsg).

// outMsg is a message assembled from small parts copied into one buffer and large parts
// borrowed from elsewhere (a backend's result, read once), written in order without being
// joined: relaying a result of many megabytes costs no copy of it.
type outMsg struct {
	buf   []byte // the copied parts
	parts []part
	n     int
	// The first parts and copied bytes live in the message itself, so that a typical response
	// (head, a few members, the gateway's _meta) costs one allocation rather than one for the
	// message and more as its slices grow.
	partsArr [outMsgParts]part
	bufArr   [outMsgBuf]byte
}

// Sizes of outMsg's inline arrays. Copied parts that follow each other merge into one, so a
// result takes one part plus two per borrowed member (the member, then the copied bytes after
// it); the copied bytes of a small result are its own plus about 200 of head and the gateway's
// serverInfo.
const (
	outMsgParts = 4
	outMsgBuf   = 512
)

// newOutMsg returns an empty message whose slices start in its inline arrays, with room for at
// least extra copied bytes.
func newOutMsg(extra int) *outMsg {
	p := &outMsg{}
	p.parts = p.partsArr[:0]
	if extra <= outMsgBuf {
		p.buf = p.bufArr[:0]
	} else {
		p.buf = make([]byte, 0, extra)
	}
	return p
}

// part is borrowed bytes, or buf[off:end] when b is nil.
type part struct {
	b        []byte
	off, end int
}

// borrowMin is the size from which a part is borrowed rather than copied.
const borrowMin = 512

func (p *outMsg) add(b []byte) {
	p.n += len(b)
	if len(b) >= borrowMin {
		p.parts = append(p.parts, part{b: b})
		return
	}
	p.addCopy(b)
}

func (p *outMsg) addString(s string) {
	p.n += len(s)
	p.addCopy([]byte(s)) // does not allocate: the conversion feeds an append
}

func (p *outMsg) addCopy(b []byte) {
	off := len(p.buf)
	p.buf = append(p.buf, b...)
	if k := len(p.parts) - 1; k >= 0 && p.parts[k].b == nil && p.parts[k].end == off {
		p.parts[k].end = len(p.buf) // extends the copied part before it
		return
	}
	p.parts = append(p.parts, part{off: off, end: len(p.buf)})
}

// each calls fn with the parts in order until fn fails.
func (p *outMsg) each(fn func([]byte) error) error {
	for _, pt := range p.parts {
		b := pt.b
		if b == nil {
			b = p.buf[pt.off:pt.end]
		}
		if err := fn(b); err != nil {
			return err
		}
	}
	return nil
}

// bytes joins the parts (a copy): for the rare response that must be re-encoded.
func (p *outMsg) bytes() []byte {
	out := make([]byte, 0, p.n)
	_ = p.each(func(b []byte) error { out = append(out, b...); return nil })
	return out
}

// last is the last byte added, 0 when nothing was.
func (p *outMsg) last() byte {
	if len(p.parts) == 0 {
		return 0
	}
	pt := p.parts[len(p.parts)-1]
	if pt.b != nil {
		return pt.b[len(pt.b)-1]
	}
	return p.buf[pt.end-1]
}

// newResponse is a JSON-RPC success response for id around the decorated result.
func (s *Server) newResponse(id, result []byte) *outMsg {
	p := newOutMsg(256 + len(s.serverInfo))
	// The head is appended where it is kept rather than built apart and copied in.
	off := len(p.buf)
	p.buf = jsonrpc.AppendResultHead(p.buf, id)
	p.n += len(p.buf) - off
	p.parts = append(p.parts, part{off: off, end: len(p.buf)})
	s.decorate(p, result)
	p.addString("}")
	return p
}

// decorate adds result with resultType and the gateway's serverInfo.
func (s *Server) decorate(p *outMsg, result []byte) {
	p.addString("{")
	var hasType, hasMeta bool
	_ = jsonrpc.Members(result, func(key, val []byte) error {
		switch string(key) {
		case "resultType":
			hasType = true
		case "_meta":
			hasMeta = true
			addKey(p, key)
			s.addMeta(p, val)
			return nil
		}
		addKey(p, key)
		p.add(val)
		return nil
	})
	if !hasType {
		addKey(p, []byte("resultType"))
		p.addString(`"complete"`)
	}
	if !hasMeta {
		addKey(p, []byte("_meta"))
		s.addMeta(p, []byte("{}"))
	}
	p.addString("}")
}

// addMeta adds a _meta object without any serverInfo, and the gateway's.
func (s *Server) addMeta(p *outMsg, meta []byte) {
	p.addString("{")
	_ = jsonrpc.Members(meta, func(key, val []byte) error {
		if string(key) == jsonrpc.MetaServerInfo {
			return nil
		}
		addKey(p, key)
		p.add(val)
		return nil
	})
	addKey(p, []byte(jsonrpc.MetaServerInfo))
	p.add(s.serverInfo)
	p.addString("}")
}

// addKey adds a member name and colon, preceded by a comma unless it opens the object.
func addKey(p *outMsg, key []byte) {
	if p.last() != '{' {
		p.addString(",")
	}
	if plainKey(key) {
		p.addString(`"`)
		p.add(key)
		p.addString(`":`)
		return
	}
	q, _ := json.Marshal(string(key))
	p.add(q)
	p.addString(":")
}

func plainKey(key []byte) bool {
	for _, c := range key {
		if c < 0x20 || c == '"' || c == '\\' || c >= 0x7f {
			return false
		}
	}
	return true
}
