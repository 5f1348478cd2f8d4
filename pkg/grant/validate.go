package grant

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/dome-registry/dome/pkg/canonical"
)

// validate checks the values of a parsed grant: identifiers, times, the
// header agreeing with the payload, every set sorted and without
// duplicates (one spelling per meaning), methods, roots, globs, hosts and
// budgets. It runs after the signature check, so a tampered value reports
// BAD_SIGNATURE, and this catches what a faulty or hostile issuer signed.
func (g *Grant) validate() error {
	if g.validated {
		return nil
	}
	p, h := &g.Payload, &g.Header
	bad := func(field, format string, a ...any) error { return refuse(CodeMalformed, field, format, a...) }
	for _, f := range []struct{ name, v string }{
		{"jti", p.JTI}, {"profile_id", p.ProfileID}, {"audience", p.Audience}, {"run_id", p.RunID},
		{"wave_id", p.WaveID}, {"issuer", p.Issuer}, {"header.kid", h.KID},
	} {
		if err := CheckID(f.v); err != nil {
			return bad(f.name, "%v", err)
		}
	}
	for _, f := range []struct{ name, v string }{{"worker_id", p.WorkerID}, {"node_id", p.NodeID}, {"node_execution_id", p.NodeExecutionID}} {
		if f.v != "" {
			if err := CheckID(f.v); err != nil {
				return bad(f.name, "%v", err)
			}
		}
	}
	if !strings.HasPrefix(p.ProfileID, "tp-") {
		return bad("profile_id", "%q: want tp-<hex>", p.ProfileID)
	}
	var err error
	if g.issuedAt, err = parseTime(p.IssuedAt); err != nil {
		return bad("issued_at", "%v", err)
	}
	if g.expiresAt, err = parseTime(p.ExpiresAt); err != nil {
		return bad("expires_at", "%v", err)
	}
	if !g.expiresAt.After(g.issuedAt) {
		return bad("expires_at", "%s is not after issued_at %s", p.ExpiresAt, p.IssuedAt)
	}
	// The header repeats what the payload binds, for tools that index
	// artifacts by header; both must say the same.
	for _, f := range []struct{ field, header, payload string }{
		{"header.object_id", h.ObjectID, p.JTI}, {"header.run_id", h.RunID, p.RunID}, {"header.wave_id", h.WaveID, p.WaveID},
		{"header.node_id", h.NodeID, p.NodeID}, {"header.created_at", h.CreatedAt, p.IssuedAt}, {"header.producer", h.Producer, p.Issuer},
	} {
		if f.header != f.payload {
			return bad(f.field, "%q differs from the payload's %q", f.header, f.payload)
		}
	}
	for _, f := range []struct{ field, v string }{{"header.inputs_hash", h.InputsHash}, {"header.payload_digest", h.PayloadDigest}} {
		if f.v != "" {
			if _, err := canonical.ParseDigest(f.v); err != nil {
				return bad(f.field, "%v", err)
			}
		}
	}
	if h.BaseRef != "" && !isFullSHA(h.BaseRef) {
		return bad("header.base_ref", "%q: want a full commit SHA", h.BaseRef)
	}
	if err := sortedUnique(p.AllowedCapabilities); err != nil {
		return bad("allowed_capabilities", "%v", err)
	}
	if len(p.AllowedCapabilities) == 0 {
		return bad("allowed_capabilities", "empty")
	}
	for _, c := range p.AllowedCapabilities {
		if err := checkCapabilityID(c); err != nil {
			return bad("allowed_capabilities", "%v", err)
		}
	}
	if len(p.AllowedMethods) == 0 {
		return bad("allowed_methods", "empty")
	}
	for i, m := range p.AllowedMethods {
		field := "allowed_methods[" + strconv.Itoa(i) + "]"
		if _, _, ok := SplitMethod(m.Method); !ok {
			return bad(field, "method %q: want <tool_id>/<operationId>", m.Method)
		}
		if i > 0 && p.AllowedMethods[i-1].Method >= m.Method {
			return bad(field, "methods must be sorted and unique (%q after %q)", m.Method, p.AllowedMethods[i-1].Method)
		}
		if m.Class.Rank() == 0 {
			return bad(field, "class %q: want read, write or admin", m.Class)
		}
		if m.SideEffect != "" && !ValidSideEffect(m.SideEffect) {
			return bad(field, "side_effect %q: want none, artifact_put or proposal_register", m.SideEffect)
		}
		if _, ok := slices.BinarySearch(p.AllowedCapabilities, m.Capability); !ok {
			return bad(field, "capability %q is not in allowed_capabilities", m.Capability)
		}
	}
	if err := sortedUnique(p.Contracts); err != nil {
		return bad("contracts", "%v", err)
	}
	for _, c := range p.Contracts {
		id, v, ok := strings.Cut(c, "@")
		if !ok || checkToolID(id) != nil || v == "" {
			return bad("contracts", "%q: want contract_id@version", c)
		}
	}
	io := &p.Constraints.IO
	for _, f := range [2]struct {
		name  string
		roots []string
	}{{"read_roots", io.ReadRoots}, {"write_roots", io.WriteRoots}} {
		for i, r := range f.roots {
			if _, err := NormalizeRoot(r); err != nil {
				return bad("constraints.io."+f.name, "%v", err)
			}
			for _, o := range f.roots[:i] {
				if o >= r || rootContains(o, r) || rootContains(r, o) {
					return bad("constraints.io."+f.name, "%v: want sorted roots, none inside another", f.roots)
				}
			}
		}
	}
	if err := sortedUnique(io.DenyGlobs); err != nil {
		return bad("constraints.io.deny_globs", "%v", err)
	}
	for _, gl := range io.DenyGlobs {
		if err := CheckGlob(gl); err != nil {
			return bad("constraints.io.deny_globs", "%v", err)
		}
	}
	if err := sortedUnique(p.Constraints.Net.AllowHosts); err != nil {
		return bad("constraints.net.allow_hosts", "%v", err)
	}
	for _, hst := range p.Constraints.Net.AllowHosts {
		if n, err := NormalizeHost(hst); err != nil || n != hst {
			return bad("constraints.net.allow_hosts", "%q: want a lowercase host name", hst)
		}
	}
	b := &p.Budgets
	if b.MaxCalls < 1 || b.MaxCalls > maxBudget || b.MaxWallSeconds < 1 || b.MaxWallSeconds > maxBudget {
		return bad("budgets", "max_calls and max_wall_seconds must be 1 to %d", int64(maxBudget))
	}
	for c, v := range b.MaxCallsByCapability {
		if _, ok := slices.BinarySearch(p.AllowedCapabilities, c); !ok {
			return bad("budgets.max_calls_by_capability", "%q is not in allowed_capabilities", c)
		}
		if v > maxBudget {
			return bad("budgets.max_calls_by_capability."+c, "%d is over %d", v, int64(maxBudget))
		}
	}
	g.validated = true
	return nil
}

func sortedUnique(xs []string) error {
	for i := 1; i < len(xs); i++ {
		if xs[i-1] >= xs[i] {
			return fmt.Errorf("want a sorted list without repeats (%q after %q)", xs[i], xs[i-1])
		}
	}
	return nil
}
