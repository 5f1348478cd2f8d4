package specfilter

import "strings"

// objKind is the OpenAPI object type of a JSON object (OpenAPI 3.0 and 3.1).
// The walker uses it to tell references from data: a "$ref" is a reference
// only where the specification allows one, and an "x-" key is an extension
// only in a specification object, never in a schema's properties or an
// example's value.
type objKind uint8

const (
	kNone objKind = iota // opaque data: examples, defaults, enums, unknown keys
	kDocument
	kInfo
	kContact
	kLicense
	kServer
	kServerVariable
	kPaths
	kPathItem
	kOperation
	kExternalDocs
	kParameter
	kHeader
	kRequestBody
	kMediaType
	kEncoding
	kResponses
	kResponse
	kCallback
	kExample
	kLink
	kSchema
	kDiscriminator
	kXML
	kSecurityScheme
	kOAuthFlows
	kOAuthFlow
	kSecurityRequirement
	kTag
	kComponents
)

// Component kinds: the maps under components, with the object kind of their entries.
var componentKinds = [...]struct {
	Name string
	Kind objKind
}{
	{"schemas", kSchema},
	{"responses", kResponse},
	{"parameters", kParameter},
	{"examples", kExample},
	{"requestBodies", kRequestBody},
	{"headers", kHeader},
	{"securitySchemes", kSecurityScheme},
	{"links", kLink},
	{"callbacks", kCallback},
	{"pathItems", kPathItem},
}

// componentSection returns the components section holding objects of kind k.
func componentSection(k objKind) string {
	for _, c := range componentKinds {
		if c.Kind == k {
			return c.Name
		}
	}
	return ""
}

// sectionKind returns the object kind of a components section.
func sectionKind(section string) (objKind, bool) {
	for _, c := range componentKinds {
		if c.Name == section {
			return c.Kind, true
		}
	}
	return kNone, false
}

// xWebhooks is where OpenAPI 3.0 documents keep their webhooks (GitHub's,
// and Redocly's convention) before 3.1 gave them a section: dome reads it as
// the webhooks section, so that webhooks.operations selects from it and the
// closure follows its references.
const xWebhooks = "x-webhooks"

// webhookSections are the sections that hold webhooks.
var webhookSections = [...]string{"webhooks", xWebhooks}

// httpMethods are the operation keys of a path item, in OpenAPI order.
var httpMethods = [...]string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

func isMethod(key string) bool {
	for _, m := range httpMethods {
		if m == key {
			return true
		}
	}
	return false
}

// shape says how the children under a key are laid out.
type shape uint8

const (
	one   shape = iota + 1 // a single object
	list                   // an array of objects
	dict                   // a map of name -> object
	multi                  // a schema, or an array of schemas (items in older drafts)
)

// child returns the kind and layout of the value under key in an object of
// kind k. ok is false for data that holds no specification objects.
func child(k objKind, key string) (objKind, shape, bool) {
	switch k {
	case kDocument:
		switch key {
		case "info":
			return kInfo, one, true
		case "servers":
			return kServer, list, true
		case "paths":
			return kPaths, one, true
		case "webhooks", xWebhooks:
			return kPathItem, dict, true
		case "components":
			return kComponents, one, true
		case "security":
			return kSecurityRequirement, list, true
		case "tags":
			return kTag, list, true
		case "externalDocs":
			return kExternalDocs, one, true
		}
	case kInfo:
		switch key {
		case "contact":
			return kContact, one, true
		case "license":
			return kLicense, one, true
		}
	case kServer:
		if key == "variables" {
			return kServerVariable, dict, true
		}
	case kPaths:
		if strings.HasPrefix(key, "/") {
			return kPathItem, one, true
		}
	case kPathItem:
		switch {
		case isMethod(key):
			return kOperation, one, true
		case key == "servers":
			return kServer, list, true
		case key == "parameters":
			return kParameter, list, true
		}
	case kOperation:
		switch key {
		case "externalDocs":
			return kExternalDocs, one, true
		case "parameters":
			return kParameter, list, true
		case "requestBody":
			return kRequestBody, one, true
		case "responses":
			return kResponses, one, true
		case "callbacks":
			return kCallback, dict, true
		case "security":
			return kSecurityRequirement, list, true
		case "servers":
			return kServer, list, true
		}
	case kParameter, kHeader:
		switch key {
		case "schema":
			return kSchema, one, true
		case "content":
			return kMediaType, dict, true
		case "examples":
			return kExample, dict, true
		}
	case kRequestBody:
		if key == "content" {
			return kMediaType, dict, true
		}
	case kMediaType:
		switch key {
		case "schema", "itemSchema":
			return kSchema, one, true
		case "examples":
			return kExample, dict, true
		case "encoding":
			return kEncoding, dict, true
		}
	case kEncoding:
		if key == "headers" {
			return kHeader, dict, true
		}
	case kResponses:
		if !isExtension(key) {
			return kResponse, one, true
		}
	case kResponse:
		switch key {
		case "headers":
			return kHeader, dict, true
		case "content":
			return kMediaType, dict, true
		case "links":
			return kLink, dict, true
		}
	case kCallback:
		if !isExtension(key) {
			return kPathItem, one, true
		}
	case kLink:
		if key == "server" {
			return kServer, one, true
		}
	case kSchema:
		return schemaChild(key)
	case kSecurityScheme:
		if key == "flows" {
			return kOAuthFlows, one, true
		}
	case kOAuthFlows:
		switch key {
		case "implicit", "password", "clientCredentials", "authorizationCode":
			return kOAuthFlow, one, true
		}
	case kTag:
		if key == "externalDocs" {
			return kExternalDocs, one, true
		}
	case kComponents:
		if sk, ok := sectionKind(key); ok {
			return sk, dict, true
		}
	}
	return kNone, 0, false
}

// schemaChild covers OpenAPI 3.0 schemas and JSON Schema 2020-12 (OpenAPI 3.1).
func schemaChild(key string) (objKind, shape, bool) {
	switch key {
	case "not", "additionalProperties", "additionalItems", "contains", "propertyNames",
		"if", "then", "else", "unevaluatedItems", "unevaluatedProperties", "contentSchema":
		return kSchema, one, true
	case "items":
		return kSchema, multi, true
	case "allOf", "anyOf", "oneOf", "prefixItems":
		return kSchema, list, true
	case "properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies":
		return kSchema, dict, true
	case "discriminator":
		return kDiscriminator, one, true
	case "xml":
		return kXML, one, true
	case "externalDocs":
		return kExternalDocs, one, true
	}
	return kNone, 0, false
}

// refable reports whether an object of kind k may be a Reference Object.
func refable(k objKind) bool {
	switch k {
	case kPathItem, kParameter, kHeader, kRequestBody, kResponse, kCallback,
		kExample, kLink, kSchema, kSecurityScheme:
		return true
	}
	return false
}

// hasExtensions reports whether x- keys of an object of kind k are
// specification extensions (every specification object, and schemas).
func hasExtensions(k objKind) bool { return k != kNone && k != kSecurityRequirement }

func isExtension(key string) bool { return strings.HasPrefix(key, "x-") }

// visitor receives every specification object under a walk.
type visitor interface {
	// object is called for each object of a known kind before its children;
	// returning false skips the children.
	object(v *Value, k objKind, at Pointer) bool
}

// walk visits v (an object of kind k at pointer at) and everything below it.
// at is reused between calls: a visitor that keeps it must copy it.
func walk(v *Value, k objKind, at Pointer, vis visitor) Pointer {
	if v == nil || v.Kind != KindObject || k == kNone {
		return at
	}
	if !vis.object(v, k, at) {
		return at
	}
	for i := range v.Members {
		m := &v.Members[i]
		ck, sh, ok := child(k, m.Key)
		if !ok {
			continue
		}
		at = append(at, m.Key)
		at = walkShape(m.Value, ck, sh, at, vis)
		at = at[:len(at)-1]
	}
	return at
}

func walkShape(v *Value, k objKind, sh shape, at Pointer, vis visitor) Pointer {
	switch {
	case sh == one || (sh == multi && v.Kind == KindObject):
		return walk(v, k, at, vis)
	case sh == list || sh == multi:
		if v.Kind != KindArray {
			return at
		}
		for i, it := range v.Members {
			at = append(at, itoa(i))
			at = walk(it.Value, k, at, vis)
			at = at[:len(at)-1]
		}
	case sh == dict:
		if v.Kind != KindObject {
			return at
		}
		for i := range v.Members {
			// Maps of named entries have no extensions: an "x-..." key is a name.
			m := &v.Members[i]
			at = append(at, m.Key)
			at = walk(m.Value, k, at, vis)
			at = at[:len(at)-1]
		}
	}
	return at
}

// itoa avoids strconv for the small indexes of arrays in a spec.
func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	var b [20]byte
	n := len(b)
	for i > 0 {
		n--
		b[n] = byte('0' + i%10)
		i /= 10
	}
	return string(b[n:])
}
