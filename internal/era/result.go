package era

import "github.com/mcp-gateway/gateway/internal/jsonrpc"

// CodeResourceNotFound is the pre-2026 code for a resource that does not exist; 2026-07-28
// answers it with -32602 (jsonrpc.CodeInvalidParams).
const CodeResourceNotFound = -32002

// Methods whose 2026-07-28 results carry caching hints (ttlMs, cacheScope).
const (
	methodToolsList         = "tools/list"
	methodPromptsList       = "prompts/list"
	methodResourcesList     = "resources/list"
	methodResourceTemplates = "resources/templates/list"
	methodResourcesRead     = "resources/read"
)

// Cacheable reports whether a 2026-07-28 result of method carries ttlMs and cacheScope.
func Cacheable(method string) bool {
	switch method {
	case methodToolsList, methodPromptsList, methodResourcesList, methodResourceTemplates, methodResourcesRead:
		return true
	}
	return false
}

// ToModernResult turns a pre-2026 response to method into its 2026-07-28 form, in place:
// -32002 (resource not found) becomes -32602; a result gets resultType "complete" when it has
// none, and a cacheable result gets ttlMs 0 and cacheScope private, since a pre-2026 peer says
// nothing about caching (whatever ttlMs or cacheScope an SDK put there was not meant for 2026
// caches, so it is replaced). A result that is not a JSON object is left as it is.
func ToModernResult(method string, m *jsonrpc.Message) *jsonrpc.Message {
	if m.Error != nil {
		if m.Error.Code == CodeResourceNotFound {
			e := *m.Error
			e.Code = jsonrpc.CodeInvalidParams
			m.Error = &e
		}
		return m
	}
	cacheable := Cacheable(method)
	hasType := false
	res, err := FilterObject(make([]byte, 0, len(m.Result)+48), m.Result, func(key []byte, val []byte) ([]byte, bool) {
		switch string(key) {
		case "resultType":
			hasType = true
		case "ttlMs", "cacheScope":
			// Replaced below on a cacheable result; kept as it is on any other.
			return val, !cacheable
		}
		return val, true
	})
	if err != nil {
		return m
	}
	var add []byte
	if !hasType {
		add = append(add, `"resultType":"complete"`...)
	}
	if cacheable {
		add = appendMember(add, `"ttlMs":0,"cacheScope":"private"`)
	}
	if len(add) > 0 {
		res = InsertMembers(res, add)
	}
	m.Result = res
	return m
}

// ToLegacyResult strips from a 2026-07-28 result object what a pre-2026 client does not know:
// resultType, ttlMs and cacheScope. Every other member stays, in order (_meta included).
func ToLegacyResult(result []byte) ([]byte, error) {
	return FilterObject(make([]byte, 0, len(result)), result, func(key []byte, val []byte) ([]byte, bool) {
		switch string(key) {
		case "resultType", "ttlMs", "cacheScope":
			return nil, false
		}
		return val, true
	})
}
