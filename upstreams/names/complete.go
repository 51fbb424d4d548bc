package names

import (
	"slices"
	"strconv"

	"github.com/yosida95/uritemplate/v3"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
)

// Completion is a completion/complete of a resource template. Each value a backend offers
// names a resource, the template expanded with it, which the caller's policy may hide: such a
// value is not relayed, as a resources/list leaves the resource out, so completing never tells
// a caller that a resource it may not read exists.
type Completion struct {
	// Template is the backend-side template the ref names.
	Template string
	// Argument is the name of the variable completed.
	Argument string
	// Context holds the values of the template's other variables the client gave
	// (params.context.arguments).
	Context map[string]string
}

// ParseCompletion reads the completion of a resource template that params (a
// completion/complete's, decoded strictly already) ask for, template being the backend-side
// template its ref names; nil for a prompt's completion. Members are matched exactly, as the
// rest of the pipeline reads params (encoding/json would take "ARGUMENT" for argument), so the
// values are judged as the variable the backend completes.
func ParseCompletion(params []byte, template string) *Completion {
	c := &Completion{Template: template, Context: map[string]string{}}
	resource := false
	_ = jsonrpc.Members(params, func(k, v []byte) error {
		switch string(k) {
		case "ref":
			// Read by the parser the route stage read it with; a ref it refuses (the request
			// is refused before it gets here) is judged as a resource's, so never unfiltered.
			ref, err := jsonrpc.ParseRef(v)
			resource = err != nil || ref.Type == "ref/resource"
		case "argument":
			_ = member(v, "name", func(n []byte) { c.Argument, _ = wire.JSONString(n) })
		case "context":
			_ = member(v, "arguments", func(args []byte) {
				_ = jsonrpc.Members(args, func(name, val []byte) error {
					if s, ok := wire.JSONString(val); ok {
						c.Context[string(name)] = s
					}
					return nil
				})
			})
		}
		return nil
	})
	if !resource {
		return nil
	}
	return c
}

// member calls fn with the value of obj's member named name, when obj is an object that has
// one.
func member(obj []byte, name string, fn func(val []byte)) error {
	if len(obj) == 0 || obj[0] != '{' {
		return nil
	}
	return jsonrpc.Members(obj, func(k, v []byte) error {
		if string(k) == name {
			fn(v)
		}
		return nil
	})
}

// completionResult drops from a completion/complete result the values naming a resource the
// caller may not see. completion.total, when present, becomes the number of values relayed: a
// backend's total counts every option it has, hidden ones and those beyond this answer
// included, and would tell how many there are.
func (u Rewriter) completionResult(res []byte) ([]byte, error) {
	tmpl, err := uritemplate.New(u.Completion.Template)
	if err != nil {
		tmpl = nil // a template that does not parse names no resource the gateway can judge
	}
	var ferr error
	out, err := wire.EditObject(make([]byte, 0, len(res)), res, func(k, val []byte) ([]byte, bool) {
		if string(k) != "completion" || val[0] != '{' {
			return nil, false
		}
		kept := 0
		inner, err := wire.EditObject(nil, val, func(k, v []byte) ([]byte, bool) {
			if string(k) != "values" || v[0] != '[' {
				return nil, false
			}
			out, _, err := filterArray(nil, v, func(elem []byte) ([]byte, bool) {
				s, ok := wire.JSONString(elem)
				ok = ok && u.completionShown(tmpl, s)
				if ok {
					kept++
				}
				return nil, ok
			})
			if err != nil {
				ferr = err
				return nil, false
			}
			return out, true
		})
		if err != nil {
			ferr = err
			return nil, false
		}
		inner, err = wire.EditObject(nil, inner, func(k, v []byte) ([]byte, bool) {
			return strconv.AppendInt(nil, int64(kept), 10), string(k) == "total"
		})
		ferr = err
		return inner, err == nil
	})
	if err == nil {
		err = ferr
	}
	return out, err
}

// completionShown reports whether the resource value names, the template expanded with it and
// the client's other values, is one the caller may see. A value is judged on the one resource it
// names: when the client left a variable of the template out, it names none, and is dropped; so
// is every value of an argument that is no variable of the template ("SHELF" for {shelf}), which
// the gateway cannot tie to the value at all, while a backend that matches argument names
// loosely would complete that variable.
func (u Rewriter) completionShown(tmpl *uritemplate.Template, value string) bool {
	if tmpl == nil {
		return false
	}
	c := u.Completion
	if !slices.Contains(tmpl.Varnames(), c.Argument) {
		return false
	}
	vals := uritemplate.Values{}
	for _, n := range tmpl.Varnames() {
		v, ok := c.Context[n]
		if n == c.Argument {
			v, ok = value, true
		}
		if !ok {
			return false
		}
		vals.Set(n, uritemplate.String(v))
	}
	uri, err := tmpl.Expand(vals)
	if err != nil {
		return false
	}
	_, ok := u.clientURI(uri)
	return ok
}
