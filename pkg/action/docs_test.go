package action

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// The documentation names the payload type the code signs with, and the
// DSSE pre-authentication line it shows has the right length.
func TestDocs_NameThePayloadType(t *testing.T) {
	pae := fmt.Sprintf("DSSEv1 %d %s 71 ", len(PayloadType), PayloadType)
	for _, path := range []string{"../../docs/actions.md", "../../docs/signing.md"} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), pae) {
			t.Errorf("%s does not show the signed bytes of an action as %q", path, pae)
		}
	}
}
