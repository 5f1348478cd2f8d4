package app

import (
	"strings"

	"github.com/dome-registry/dome/pkg/signing"
	"github.com/urfave/cli/v2"
)

func newActionCommand(env *Env) *cli.Command {
	keygen := newKeygenCommand(env)
	keygen.Usage = "create an Ed25519 signing key for action documents (same as dome keygen)"
	keygen.Description = help("action_keygen")
	return &cli.Command{
		Name:  "action",
		Usage: "sign, publish, list, show, verify, deprecate, audit and lock signed action schemas",
		Subcommands: []*cli.Command{
			keygen,
			newActionSignCommand(env),
			newActionPublishCommand(env),
			newActionListCommand(env),
			newActionShowCommand(env),
			newActionVerifyCommand(env),
			newActionDeprecateCommand(env),
			newActionAuditCommand(env),
			newActionLockCommand(env),
		},
		Description: help("action"),
	}
}

// optionalTrustedKeys loads the trusted keys when any are configured, and
// returns nil without error when none are.
func optionalTrustedKeys(env *Env, flagValue string) (*signing.TrustedKeys, error) {
	if flagValue == "" && env.Getenv("TRUSTED_KEYS_PATH") == "" && strings.TrimSpace(env.Getenv("TRUSTED_KEYS_JSON")) == "" {
		return nil, nil
	}
	keys, _, err := loadTrustedKeys(env, flagValue)
	return keys, err
}
