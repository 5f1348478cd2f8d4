package codegen

import (
	"sort"

	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/specfilter"
)

// RuntimeData is what the bundles' run-time layer templates render: the
// policy the client enforces, the error taxonomy and the identity the
// loader compares manifest.json with, each as canonical JSON so that every
// language embeds the same bytes.
type RuntimeData struct {
	Policy       *Policy
	PolicyJSON   string
	TaxonomyJSON string
	// IdentityJSON holds the manifest inputs that do not change with a
	// commit: tool_id, profile_id, language_target, sdk_flavor,
	// generator_bundle, bundle_tree, profile_digest, filtered_spec_digest,
	// normalization_rules_version. A loader refuses a manifest.json whose
	// inputs differ from them.
	IdentityJSON string
	Identity     map[string]string
	Codes        []string
	// Package is the Go package name (Go bundles).
	Package string
	// Files are the client's files besides the engine's and templates'
	// outputs' own names: every output, operations.json and manifest.json,
	// sorted (what a Go client embeds to verify itself).
	Files []string
}

func runtimeData(in RenderInput, m *Model) (*RuntimeData, error) {
	prof, src := in.Profile, in.ProfileSource
	if prof == nil {
		prof = &specfilter.Profile{ID: in.ProfileID}
		src = "profile " + in.ProfileID
	}
	pol, err := BuildPolicy(in.ToolID, prof, src, m)
	if err != nil {
		return nil, err
	}
	pj, err := pol.JSON()
	if err != nil {
		return nil, err
	}
	tj, err := taxonomyJSON()
	if err != nil {
		return nil, err
	}
	b := in.Bundle
	id := map[string]string{
		"tool_id":                     in.ToolID,
		"profile_id":                  in.ProfileID,
		"language_target":             b.Spec.Language,
		"sdk_flavor":                  in.SDKFlavor,
		"generator_bundle":            in.GeneratorBundle,
		"profile_digest":              in.ProfileDigest,
		"filtered_spec_digest":        in.Filtered.Digest,
		"normalization_rules_version": NormalizationRulesVersion,
	}
	if b.Resolution != nil {
		id["bundle_tree"] = b.Resolution.Tree.String()
	}
	ij, err := canonical.Marshal(id)
	if err != nil {
		return nil, err
	}
	rt := &RuntimeData{Policy: pol, PolicyJSON: pj, TaxonomyJSON: tj, IdentityJSON: string(ij), Identity: id, Codes: TaxonomyCodes()}
	if b.Spec.Engine == "oapi-codegen" {
		rt.Package, _ = in.Options["package"].(string)
		if rt.Package == "" {
			rt.Package = goPackageName(in.ToolID)
		}
	}
	rt.Files = []string{ManifestFile, OperationsIndexFile}
	for _, o := range b.Spec.Outputs {
		rt.Files = append(rt.Files, o.Path)
	}
	sort.Strings(rt.Files)
	return rt, nil
}

// templateOf names the template an output is rendered from.
func templateOf(b *Bundle, path string) string {
	for _, o := range b.Spec.Outputs {
		if o.Path == path {
			return o.Template
		}
	}
	return "bundle.json"
}
