package agentlock

import (
	"sort"
	"testing"
)

func TestCompareVersions(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"1.4.0", "1.10.0", -1}, // SemVer, not bytes ("1.10.0" < "1.4.0" by bytes)
		{"1.0.0-rc.1", "1.0.0", -1},
		{"1.0.0-alpha", "1.0.0-alpha.1", -1},
		{"1.0.0-alpha.beta", "1.0.0-beta", -1},
		{"1.0.0-beta.2", "1.0.0-beta.11", -1},
		{"1.0.0", "1.0.0", 0},
		{"1.0.0+b", "1.0.0+a", 1}, // equal precedence: bytes
		{"v1.2.3", "1.2.4", -1},   // a leading v is allowed
		{"1.0.0", "v1.0.0", -1},
		{"10.0.0", "2024.05", -1}, // SemVer before other versions
		{"2024.05", "0.0.1", 1},
		{"1.2", "1.10", 1},     // neither is SemVer: bytes
		{"01.2.3", "1.2.3", 1}, // leading zeros are not SemVer
		{"r9", "r10", 1},
	}
	for _, tt := range tests {
		if got := CompareVersions(tt.a, tt.b); got != tt.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := CompareVersions(tt.b, tt.a); got != -tt.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d", tt.b, tt.a, got, -tt.want)
		}
	}
}

// The order is total: sorting any permutation gives the same sequence,
// and it is transitive over a mixed sample.
func TestCompareVersions_TotalOrder(t *testing.T) {
	vs := []string{"1.10.0", "1.9", "1.9.0", "v1.9.0", "1.9.0+x", "1.9.0-rc.1", "2024.05", "r10", "r9", "0.0.1", "1.0.0-alpha", "10.0.0", "1.10"}
	for _, a := range vs {
		for _, b := range vs {
			for _, c := range vs {
				if CompareVersions(a, b) < 0 && CompareVersions(b, c) < 0 && CompareVersions(a, c) >= 0 {
					t.Fatalf("not transitive: %s < %s < %s but not %s < %s", a, b, c, a, c)
				}
			}
		}
	}
	sorted := append([]string(nil), vs...)
	sort.Slice(sorted, func(i, j int) bool { return CompareVersions(sorted[i], sorted[j]) < 0 })
	rev := make([]string, len(vs))
	for i, v := range vs {
		rev[len(vs)-1-i] = v
	}
	sort.Slice(rev, func(i, j int) bool { return CompareVersions(rev[i], rev[j]) < 0 })
	for i := range sorted {
		if sorted[i] != rev[i] {
			t.Fatalf("sort depends on input order: %v vs %v", sorted, rev)
		}
	}
}
