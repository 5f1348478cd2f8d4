package app

import (
	"context"
	"fmt"

	"github.com/dome-registry/dome/pkg/action/actiongit"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/signing"
	"github.com/urfave/cli/v2"
)

func newActionAuditCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "audit",
		Usage: "prove from the git history that no published action version ever changed",
		Flags: withGlobal(actionStoreFlag(), trustedFlag()),
		Action: func(c *cli.Context) error {
			keys, err := optionalTrustedKeys(env, c.String("trusted"))
			if err != nil {
				return err
			}
			spec, err := parseActionStoreURL(c.String("store"))
			if err != nil {
				return err
			}
			if spec.Kind != "git" {
				return &errkind.InputError{Source: "--store", Problem: "dome action audit walks git history; a PostgreSQL store has none", Hint: "audit a git store: --store git:PATH[#BRANCH]"}
			}
			store, err := openGitActionStore(c.Context, env, spec, repoTarget(c, env), false)
			if err != nil {
				return err
			}
			defer store.Close()
			return runActionAudit(c.Context, env, store, keys, globalBool(c, flagJSON))
		},
		Description: help("action_audit"),
	}
}

func runActionAudit(ctx context.Context, env *Env, store *actiongit.Store, keys *signing.TrustedKeys, asJSON bool) error {
	rep, err := store.Audit(ctx, actiongit.AuditOptions{Keys: keys})
	if err != nil {
		return fmt.Errorf("audit %s: %w", store.Branch(), err)
	}
	if asJSON {
		if err := writeJSON(env.Stdout, rep); err != nil {
			return err
		}
	} else if rep.OK() {
		at := "does not exist yet"
		if rep.Head != "" {
			at = "at " + short(rep.Head)
		}
		verified := ""
		if keys != nil {
			verified = fmt.Sprintf(", %d verified", rep.Verified)
		}
		fmt.Fprintf(env.Stdout, "audit ok: %s %s: %d commits, %d versions%s; no published version ever changed\n", rep.Branch, at, rep.Commits, rep.Versions, verified)
	}
	if rep.OK() {
		return nil
	}
	ce := &errkind.CheckError{Problem: fmt.Sprintf("audit failed: %s at %s: %d violations in %d commits", rep.Branch, short(rep.Head), len(rep.Violations), rep.Commits)}
	for _, v := range rep.Violations {
		what := v.Name + "@" + v.Version
		if v.Version == "" { // a file of the action that is not a version (deprecations.json)
			what = v.Path
		}
		ce.Details = append(ce.Details, fmt.Sprintf("%s %s in commit %s: %s", v.Kind, what, v.Commit, v.Detail))
	}
	ce.Hint = "a published version must never change: restore the branch to its last good commit (git update-ref) and publish changes under new versions"
	return ce
}
