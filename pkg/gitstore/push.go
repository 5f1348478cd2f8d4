package gitstore

import (
	"context"
	"errors"
	"fmt"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
)

// PushRef pushes one ref (and nothing else) to remote, which is a remote
// name from the repository's config or a URL. It never forces: a ref that
// exists on the remote with another value is an error.
func (r *Repo) PushRef(ctx context.Context, remote, ref string) error {
	installFileTransport()
	spec := config.RefSpec(ref + ":" + ref)
	if err := spec.Validate(); err != nil {
		return fmt.Errorf("push %s: %w", ref, err)
	}
	var rem *git.Remote
	if IsURL(remote) {
		rem = git.NewRemote(r.storage, &config.RemoteConfig{Name: "dome-push", URLs: []string{remote}})
	} else {
		var err error
		if rem, err = r.repo.Remote(remote); err != nil {
			return fmt.Errorf("push %s: remote %q: %w", ref, remote, err)
		}
	}
	err := rem.PushContext(ctx, &git.PushOptions{RemoteName: rem.Config().Name, RefSpecs: []config.RefSpec{spec}})
	if errors.Is(err, git.NoErrAlreadyUpToDate) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("push %s to %s: %w", ref, remote, err)
	}
	return nil
}
