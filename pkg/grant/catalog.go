package grant

import (
	"fmt"
	"slices"
	"strings"
)

// Catalog holds the operations of the contracts (registry tools) a resolver
// maps capabilities to. Package skill builds it from OpenAPI documents.
type Catalog struct {
	Contracts map[string]*Contract // by tool id
}

// Contract is one tool's operations at a pinned ref.
type Contract struct {
	ID         string      // the tool id
	Version    string      // the spec's info.version
	Commit     string      // the commit it was read at ("" for local files)
	Digest     string      // sha256 of the spec's canonical bytes
	Skill      bool        // its operations declare x-dome-class (a skill contract)
	Operations []Operation // sorted by ID
}

// Operation is one callable operation of a contract.
type Operation struct {
	ID         string   // operationId
	HTTPMethod string   // GET, POST, ...
	Path       string   // the path template
	Tags       []string // its families
	// Class is the declared x-dome-class of a skill contract, or for other
	// contracts the class inferred from HTTP: GET, HEAD and OPTIONS read;
	// others write, admin when tagged "admin".
	Class          Class
	Declared       bool   // Class comes from x-dome-class
	SideEffect     string // x-dome-side-effect ("" when not declared)
	IdempotencyKey bool   // calls must carry an idempotency_key
}

// InferClass is the class of an operation that declares none.
func InferClass(httpMethod string, tags []string) Class {
	switch strings.ToUpper(httpMethod) {
	case "GET", "HEAD", "OPTIONS":
		return ClassRead
	}
	if slices.Contains(tags, "admin") {
		return ClassAdmin
	}
	return ClassWrite
}

// ContractRef is "id@version", as grants list their contracts.
func (c *Contract) ContractRef() string { return c.ID + "@" + c.Version }

func (c *Contract) op(id string) (*Operation, bool) {
	i, ok := slices.BinarySearchFunc(c.Operations, id, func(o Operation, id string) int { return strings.Compare(o.ID, id) })
	if !ok {
		return nil, false
	}
	return &c.Operations[i], true
}

// resolvedMethod is one method a capability maps to.
type resolvedMethod struct {
	Method     string
	Tool, Op   string
	Class      Class
	SideEffect string
	Tags       []string
	Via        string // "operation_ids" or "families [x]"
}

// Index is a resolver checked against a catalog: every capability resolved
// to its methods once, so Derive does no lookups in specs. It is immutable
// and safe for concurrent use.
type Index struct {
	Resolver *Resolver
	Catalog  *Catalog
	methods  map[string][]resolvedMethod // by capability, sorted by method
	owners   map[string][]string         // method -> capabilities that map it, sorted
}

// NewIndex resolves every capability of r against c: each operation id
// must exist in its tool, each family must name at least one operation, and
// no operation may be of a higher class than its capability (a read
// capability never maps a write). Problems are BAD_RESOLVER errors naming
// the field.
func NewIndex(r *Resolver, c *Catalog) (*Index, error) {
	ix := &Index{Resolver: r, Catalog: c, methods: map[string][]resolvedMethod{}, owners: map[string][]string{}}
	bad := func(field, problem, hint string) error {
		return specErr(CodeBadResolver, r.Source, field, problem, hint)
	}
	for _, id := range r.IDs() {
		capb := r.Capabilities[id]
		field := "/capabilities/" + id
		contract, ok := c.Contracts[capb.Tool]
		if !ok {
			return nil, bad(field+"/tool", fmt.Sprintf("tool %q is not in the registry", capb.Tool), "name a tool under registry/tools/")
		}
		var ms []resolvedMethod
		add := func(op *Operation, via string) {
			ms = append(ms, resolvedMethod{Method: MethodName(contract.ID, op.ID), Tool: contract.ID, Op: op.ID, Class: op.Class, SideEffect: op.SideEffect, Tags: op.Tags, Via: via})
		}
		for i, opID := range capb.OperationIDs {
			op, ok := contract.op(opID)
			if !ok {
				return nil, bad(fmt.Sprintf("%s/operation_ids/%d", field, i), fmt.Sprintf("%s has no operation %q", contract.ID, opID), "list the tool's operations with: dome spec filter "+contract.ID+"@HEAD --explain")
			}
			add(op, "operation_ids")
		}
		for i, fam := range capb.Families {
			n := 0
			for j := range contract.Operations {
				if slices.Contains(contract.Operations[j].Tags, fam) {
					add(&contract.Operations[j], "families ["+fam+"]")
					n++
				}
			}
			if n == 0 {
				return nil, bad(fmt.Sprintf("%s/families/%d", field, i), fmt.Sprintf("no operation of %s is tagged %q", contract.ID, fam), "a family is an OpenAPI tag of the tool's operations")
			}
		}
		slices.SortFunc(ms, func(a, b resolvedMethod) int { return strings.Compare(a.Method, b.Method) })
		ms = slices.CompactFunc(ms, func(a, b resolvedMethod) bool { return a.Method == b.Method })
		for _, m := range ms {
			if m.Class.Rank() > capb.Class.Rank() {
				how := "inferred from its HTTP method"
				if op, _ := contract.op(m.Op); op != nil && op.Declared {
					how = "declared by x-dome-class"
				}
				return nil, bad(field, fmt.Sprintf("%s capability maps %s, %s %s operation (%s)", capb.Class, m.Method, article(string(m.Class)), m.Class, how), "map it from a capability of class "+string(m.Class)+" or higher")
			}
			ix.owners[m.Method] = append(ix.owners[m.Method], id)
		}
		ix.methods[id] = ms
	}
	return ix, nil
}

func article(w string) string {
	if w != "" && strings.ContainsRune("aeiou", rune(w[0])) {
		return "an"
	}
	return "a"
}
