package era

import (
	"encoding/json"
	"fmt"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// A form-mode elicitation's requestedSchema is, in every revision that has elicitation, "a
// restricted subset of JSON Schema": an object schema whose properties are each one primitive
// (a string, with a format or an enum; a number or an integer; a boolean) or a multi-select
// enum (an array whose items are an enum of strings), with no nesting. A client renders it as a
// form of that many fields. A schema outside that subset is one a client may render in part
// (a nested object as one text field, a $ref as nothing), refuse, or render differently from
// another client, so that what the person answers is not what the backend asked; and it is the
// backend's input to the client's form code, which the gateway does not get to vet otherwise.
// The gateway relays no such request: a 2026-07-28 client gets -32010 for the round, a 2025
// backend -32602 for its request.

// schemaWords are the members of a requestedSchema, and of its property schemas, that decide
// its shape: a spelling of one of them that a case-folding decoder reads as it ("Properties",
// "ITEMS") is refused, since a client may read it where the gateway did not.
var schemaWords = [...][]byte{[]byte("type"), []byte("properties"), []byte("required"), []byte("items"),
	[]byte("enum"), []byte("oneOf"), []byte("anyOf"), []byte("$ref")}

// checkFormSchema refuses a requestedSchema (raw JSON, nil when absent) that is not the flat
// object of primitive properties form-mode elicitation allows. Property names are not repeated
// in the error: they are the backend's words.
func checkFormSchema(raw []byte) error {
	if raw == nil {
		return nil
	}
	if !isObject(raw) {
		return fmt.Errorf("requestedSchema is not an object")
	}
	if err := spelledOtherwise(raw, schemaWords[:]); err != nil {
		return fmt.Errorf("requestedSchema: %w", err)
	}
	var err error
	_ = jsonrpc.Members(raw, func(k, v []byte) error {
		switch {
		case err != nil:
		case string(k) == "type":
			if string(v) != `"object"` {
				err = fmt.Errorf("requestedSchema is not of type object")
			}
		case string(k) == "properties":
			err = checkFormProperties(v)
		case string(k) == "required":
			if !stringArray(v) {
				err = fmt.Errorf("requestedSchema's required is not an array of strings")
			}
		case !primitive(v) || string(k) == "$ref":
			err = fmt.Errorf("requestedSchema holds %s, which a flat form schema does not have", memberWord(k))
		}
		return nil
	})
	return err
}

// checkFormProperties checks the properties member of a requestedSchema.
func checkFormProperties(raw []byte) error {
	if !isObject(raw) {
		return fmt.Errorf("requestedSchema's properties are not an object")
	}
	var err error
	n := 0
	_ = jsonrpc.Members(raw, func(_, v []byte) error {
		n++
		if err == nil {
			if e := checkFormProperty(v); e != nil {
				err = fmt.Errorf("requestedSchema property %d is not a primitive: %w", n, e)
			}
		}
		return nil
	})
	return err
}

// checkFormProperty checks one property schema: its type one of the primitives (or none, for
// an enum: a string), every member a JSON primitive but an enum's values (enum, enumNames, a
// titled enum's oneOf of {const, title}) and, for the array type only, items: an enum of strings
// itself (enum, or anyOf of {const, title}).
func checkFormProperty(raw []byte) error {
	if !isObject(raw) {
		return fmt.Errorf("not an object")
	}
	if err := spelledOtherwise(raw, schemaWords[:]); err != nil {
		return err
	}
	typ := ""
	var items []byte
	var err error
	_ = jsonrpc.Members(raw, func(k, v []byte) error {
		switch {
		case err != nil:
		case string(k) == "type":
			if v[0] != '"' || json.Unmarshal(v, &typ) != nil {
				err = fmt.Errorf("type is not a string")
			}
		case string(k) == "items":
			items = v
		case string(k) == "enum" || string(k) == "enumNames" || string(k) == "default":
			if !primitive(v) && !primitiveArray(v) {
				err = fmt.Errorf("%s holds more than primitive values", k)
			}
		case string(k) == "oneOf":
			err = titledEnum(v, "oneOf")
		case !primitive(v) || string(k) == "$ref":
			err = fmt.Errorf("it holds %s", memberWord(k))
		}
		return nil
	})
	if err != nil {
		return err
	}
	switch typ {
	case "", "string", "number", "integer", "boolean":
		if items != nil {
			return fmt.Errorf("it has items but is not an array")
		}
		return nil
	case "array":
		return checkEnumItems(items)
	}
	return fmt.Errorf("type %q is not one of string, number, integer, boolean or array", typ)
}

// checkEnumItems checks the items of a multi-select enum property: an object whose members are
// primitives but its enum (an array of primitives) or anyOf (titled entries).
func checkEnumItems(raw []byte) error {
	if raw == nil || !isObject(raw) {
		return fmt.Errorf("an array without items that are an enum of strings")
	}
	if err := spelledOtherwise(raw, schemaWords[:]); err != nil {
		return err
	}
	var err error
	_ = jsonrpc.Members(raw, func(k, v []byte) error {
		switch {
		case err != nil:
		case string(k) == "type":
			if string(v) != `"string"` {
				err = fmt.Errorf("items are not strings")
			}
		case string(k) == "enum":
			if !primitiveArray(v) {
				err = fmt.Errorf("items' enum holds more than primitive values")
			}
		case string(k) == "anyOf":
			err = titledEnum(v, "items' anyOf")
		case !primitive(v) || string(k) == "$ref":
			err = fmt.Errorf("items hold %s", memberWord(k))
		}
		return nil
	})
	return err
}

// titledEnum checks a titled enum's entries: an array of objects of primitives.
func titledEnum(raw []byte, what string) error {
	bad := len(raw) == 0 || raw[0] != '['
	if !bad {
		var entries []json.RawMessage
		bad = json.Unmarshal(raw, &entries) != nil
		for _, e := range entries {
			if bad {
				break
			}
			bad = !isObject(e) || jsonrpc.Members(e, func(k, v []byte) error {
				if !primitive(v) || string(k) == "$ref" {
					return fmt.Errorf("not a titled value")
				}
				return nil
			}) != nil
		}
	}
	if bad {
		return fmt.Errorf("%s is not a list of titled values", what)
	}
	return nil
}

// primitive reports whether the scanned JSON value v is neither an object nor an array.
func primitive(v []byte) bool {
	return len(v) > 0 && v[0] != '{' && v[0] != '['
}

// primitiveArray reports whether the scanned JSON value v is an array of primitives.
func primitiveArray(v []byte) bool {
	var vals []json.RawMessage
	if len(v) == 0 || v[0] != '[' || json.Unmarshal(v, &vals) != nil {
		return false
	}
	for _, x := range vals {
		if !primitive(x) {
			return false
		}
	}
	return true
}

// stringArray reports whether the scanned JSON value v is an array of strings.
func stringArray(v []byte) bool {
	var s []string
	return len(v) > 0 && v[0] == '[' && json.Unmarshal(v, &s) == nil
}

// memberWord names a schema member in an error: a keyword of JSON Schema by its name, anything
// else as "another member", so that no word of the backend's is repeated.
func memberWord(k []byte) string {
	switch string(k) {
	case "$ref", "$defs", "definitions", "allOf", "anyOf", "oneOf", "not", "if", "then", "else",
		"additionalProperties", "patternProperties", "properties", "items", "prefixItems", "contains",
		"dependentSchemas", "propertyNames", "unevaluatedProperties", "unevaluatedItems", "$dynamicRef":
		return string(k)
	}
	return "a member that is an object or an array"
}
