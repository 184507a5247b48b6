/*
 * hpnode completion bash|zsh: the shell completion scripts that `make
 * install` puts in place (src/completion/), printed from the copies built
 * into the binary, for a machine where only the binary was copied:
 *
 *	eval "$(hpnode completion bash)"
 *	hpnode completion zsh > "${fpath[1]}/_hpnode"
 *
 * Both scripts ask the binary itself for its commands and options, so the
 * printed copy never lists an option this binary lacks.
 */
#include <stdio.h>
#include <string.h>

#include "hp/cmd.h"
#include "hp/err.h"
#include "hp_completion.h"

static const struct hp_opt completion_options[] = {
	{ NULL, 0, 0, NULL },
};

static int completion_check(struct hp_cmd_ctx *c)
{
	if (c->argc != 1)
		return hp_cmd_usage_error(c->cmd->name, "%s", "name one shell: bash or zsh");
	if (strcmp(c->argv[0], "bash") && strcmp(c->argv[0], "zsh"))
		return hp_cmd_usage_error(c->cmd->name, "no completion for '%s' (bash or zsh)",
					  c->argv[0]);
	return 0;
}

static int completion_run(struct hp_cmd_ctx *c)
{
	/* embed.sh's table, in the order the Makefile names them: bash, then zsh. */
	const char *text = (const char *)hp_refdocs[strcmp(c->argv[0], "bash") ? 1 : 0].text;

	if (fputs(text, stdout) == EOF)
		return HP_EXIT_FATAL;
	return HP_EXIT_OK;
}

const struct hp_cmd_ops hp_cmd_completion = {
	.usage = "usage: hpnode completion bash|zsh\n"
		 "\n"
		 "Prints the shell completion script that make install puts in place, from\n"
		 "the copy built into this binary:\n"
		 "  eval \"$(hpnode completion bash)\"        (in ~/.bashrc)\n"
		 "  hpnode completion zsh > \"${fpath[1]}/_hpnode\"\n"
		 "\n",
	.exit_text = "\n"
		     "Exit status: 0 printed, 2 usage (no shell, or one other than bash and zsh).\n",
	.options = completion_options,
	.check = completion_check,
	.run = completion_run,
};
