package registry

import (
	"errors"
	"fmt"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
)

// Policy files, at the repository root.
const (
	ResolverSpecPath = "policy/resolver_spec.json"
	PolicySpecPath   = "policy/policy_spec.json"
)

// ReadPolicyFile returns a validated policy file (ResolverSpecPath or
// PolicySpecPath) at a pinned commit.
func (r *Registry) ReadPolicyFile(p Pin, path string) ([]byte, error) {
	schema := SchemaResolverSpec
	switch path {
	case ResolverSpecPath:
	case PolicySpecPath:
		schema = SchemaPolicySpec
	default:
		return nil, fmt.Errorf("unknown policy file %q", path)
	}
	e, err := r.repo.EntryAt(p.Tree, path)
	if errors.Is(err, gitstore.ErrNotFound) {
		return nil, &errkind.InputError{Source: path, Problem: fmt.Sprintf("missing at %s", p.Commit.Short()), Hint: "add it (see pkg/registry/schemas/)"}
	}
	if err != nil {
		return nil, err
	}
	data, err := r.readRegular(e, path+"@"+p.Commit.Short())
	if err != nil {
		return nil, err
	}
	if err := r.validate(schema, path+"@"+p.Commit.Short(), data); err != nil {
		return nil, err
	}
	return data, nil
}
